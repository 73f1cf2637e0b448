"""Typed tables: column names and cell types, in order, and a table's schema lists both."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from autovend.currency import fill_money, money_words
from autovend.tools.handlers import CATALOG_COLUMNS
from autovend.tools.tables import CATALOG, DeviceDailyTable, columns_type, row_type, spec, table_model


def test_a_spec_pairs_every_column_with_a_type():
    assert [name for name, _ in CATALOG] == CATALOG_COLUMNS
    with pytest.raises(ValueError):
        spec(["a", "b"], (int,))


def test_a_table_model_fixes_columns_and_cells():
    t = table_model("T", "Two columns.", spec(["day", "name"], (int, str | None)))
    ok = t.model_validate_json('{"columns": ["day", "name"], "rows": [[1, "a"], [2, null]]}', strict=True)
    assert ok.rows == [(1, "a"), (2, None)]
    assert ok.column("day") == [1, 2]
    for bad in (
        '{"columns": ["name", "day"], "rows": []}',  # order
        '{"columns": ["day"], "rows": []}',  # a column missing
        '{"columns": ["day", "name"], "rows": [[1]]}',  # a cell missing
        '{"columns": ["day", "name"], "rows": [[1.5, "a"]]}',  # a day is an integer
        '{"columns": ["day", "name"], "rows": [], "extra": 1}',
    ):
        with pytest.raises(ValidationError):
            t.model_validate_json(bad, strict=True)


def test_the_schema_lists_column_names_and_cell_types():
    schema = DeviceDailyTable.model_json_schema()
    cols = schema["properties"]["columns"]
    assert [c["const"] for c in cols["prefixItems"]] == ["day", "units_sold", "revenue"]
    assert cols["minItems"] == cols["maxItems"] == 3
    row = schema["properties"]["rows"]["items"]
    assert [c["type"] for c in row["prefixItems"]] == ["integer", "integer", "number"]
    assert row["prefixItems"][2]["description"] == "{currency}, rounded to the {minor_unit}."  # filled per world
    assert fill_money(row["prefixItems"][2], money_words("UAH"))["description"] == "UAH, rounded to the kopiyka."


def test_columns_and_row_types_alone():
    cols, row = columns_type(spec(["a", "b"], (int, float))), row_type(spec(["a", "b"], (int, float)))
    assert cols.__args__[0].__args__ == ("a",) and row.__args__ == (int, float)

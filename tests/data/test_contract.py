import pandas as pd
import pytest
from pydantic import ValidationError

from autovend.data.contract import (
    CONTRACT_FILES,
    ISO_3166_ALPHA2,
    ORDERS,
    SITE_TYPE_PATTERN,
    TABLES,
    Kind,
    SourceMeta,
    rule_schema,
)
from autovend.demand.settings import SITE_TYPES

GOOD = {"name": "op-1", "currency": "CNY", "timezone": "Asia/Shanghai", "country": "CN", "description": "x"}


def failing_rows(schema, frame, column):
    """1-based rows failing any check of `column` (as the checker computes them)."""
    bad = pd.Series(False, index=frame.index)
    for check in schema.columns[column].checks:
        out = check(frame[column]).check_output.reindex(frame.index, fill_value=True)
        bad |= ~out.astype(bool)
    return [i + 1 for i in bad[bad].index]


def test_tables_in_contract_order_with_required_flags():
    assert [(t.stem, t.required) for t in TABLES] == [
        ("machines", True),
        ("products", True),
        ("orders", True),
        ("inventory", False),
        ("weather", False),
        ("calendar", False),
    ]
    assert ORDERS.column_names == ("order_id", "machine_id", "sku_id", "ts", "qty", "unit_price", "status")
    assert ORDERS.column("ts").kind is Kind.TIMESTAMP
    assert not ORDERS.column("status").required


def test_contract_files_are_yaml_and_two_formats_per_table():
    assert len(CONTRACT_FILES) == 1 + 2 * 6
    assert CONTRACT_FILES[:3] == ("source.yaml", "machines.csv", "machines.parquet")


def test_site_types_and_iso_list():
    assert SITE_TYPES == ("worksite", "campus", "residential", "commercial", "office", "public", "unknown")
    assert SITE_TYPE_PATTERN == "[a-z][a-z0-9_]*"
    assert len(ISO_3166_ALPHA2) == 249
    assert {"CN", "US", "NA", "NO"} <= ISO_3166_ALPHA2
    assert "XX" not in ISO_3166_ALPHA2


def test_source_meta_accepts_good_and_ignores_extra_keys():
    meta = SourceMeta.model_validate({**GOOD, "licence": "CC-BY-4.0", "contact": "ops@example.com"})
    assert meta.name == "op-1"
    assert meta.licence == "CC-BY-4.0"
    assert SourceMeta.model_validate(GOOD).licence is None


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        pytest.param("name", "My Operator", "should match pattern", id="name-spaces"),
        pytest.param("currency", "yuan", "should match pattern", id="currency-word"),
        pytest.param("currency", "cny", "should match pattern", id="currency-lower"),
        pytest.param("timezone", "Asia/Shangai", "not an IANA time zone", id="timezone-typo"),
        pytest.param("timezone", "../etc/passwd", "not an IANA time zone", id="timezone-path"),
        pytest.param("country", "CHN", "not an ISO 3166 alpha-2", id="country-alpha3"),
        pytest.param("country", False, "read this value as a boolean", id="country-yaml-no"),
    ],
)
def test_source_meta_refuses_bad_values(key, value, message):
    with pytest.raises(ValidationError) as err:
        SourceMeta.model_validate({**GOOD, key: value})
    assert err.value.errors()[0]["loc"] == (key,)
    assert message in str(err.value)


def test_source_meta_names_each_missing_key():
    with pytest.raises(ValidationError) as err:
        SourceMeta.model_validate({"name": "x"})
    missing = sorted(e["loc"][0] for e in err.value.errors() if e["type"] == "missing")
    assert missing == ["country", "currency", "description", "timezone"]


def test_rule_schema_bounds_and_choices_on_orders():
    frame = pd.DataFrame(
        {
            "order_id": ["a", "b", "c", "d"],
            "machine_id": ["M1", "M1", "M2", "M9"],
            "sku_id": ["S1", "S1", "S1", "S1"],
            "ts": pd.to_datetime(["2025-01-01"] * 4),
            "qty": [1.0, 0.0, float("nan"), -2.0],
            "unit_price": [0.0, 1.5, -0.01, 2.0],
            "status": pd.Series(["completed", None, "done", "failed"], dtype="str"),
        }
    )
    schema = rule_schema(ORDERS, {"machines": {"M1", "M2"}, "products": {"S1"}})
    assert failing_rows(schema, frame, "qty") == [2, 4]  # NaN (blank or bad type) is reported elsewhere
    assert failing_rows(schema, frame, "unit_price") == [3]  # >= 0 allows a free item
    assert failing_rows(schema, frame, "status") == [3]
    assert failing_rows(schema, frame, "machine_id") == [4]
    checks = {c.name: c for c in schema.columns["qty"].checks}
    assert checks["qty:bound"].error == "must be ≥ 1"
    assert "at least one unit" in checks["qty:bound"].description


def test_rule_schema_leaves_out_references_to_unknown_tables():
    schema = rule_schema(ORDERS, {"products": {"S1"}})
    names = [c.name for col in schema.columns.values() for c in col.checks]
    assert "sku_id:reference" in names
    assert "machine_id:reference" not in names


def test_location_check_wants_own_site_type_as_prefix():
    machines = TABLES[0]
    frame = pd.DataFrame(
        {
            "machine_id": ["M1", "M2", "M3", "M4", "M5"],
            "site_type": ["worksite", "campus", "campus", "office", "office"],
            "location": pd.Series(["worksite/canteen", None, "worksite/gym", "office", "office/"], dtype="str"),
            "capacity": [1.0, 2.0, 3.0, 4.0, 5.0],
        }
    )
    (check,) = rule_schema(machines).checks
    assert check.title == "location"
    ok = check(frame).check_output.to_list()
    assert ok == [True, True, False, False, False]


def test_site_types_are_open_lower_case_names():
    machines = TABLES[0]
    names = ["hospital", "school_2", "worksite", "School", "2nd_floor", "food court", "café", "x-y"]
    frame = pd.DataFrame({"machine_id": [f"M{i}" for i in range(8)], "site_type": names})
    assert failing_rows(rule_schema(machines), frame, "site_type") == [4, 5, 6, 7, 8]


def test_location_check_skips_a_missing_site_type_column():
    frame = pd.DataFrame({"machine_id": ["M1"], "location": pd.Series(["worksite/canteen"], dtype="str")})
    (check,) = rule_schema(TABLES[0]).checks
    assert check(frame).check_output.to_list() == [True]


def test_unique_check_flags_every_copy():
    frame = pd.DataFrame({"machine_id": ["M1", "M2", "M1"], "site_type": ["public"] * 3})
    schema = rule_schema(TABLES[0])
    assert failing_rows(schema, frame, "machine_id") == [1, 3]

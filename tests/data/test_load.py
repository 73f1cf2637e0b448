"""`load_source`: a checked source folder as typed tables, or the check's report as a SourceError."""

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from autovend.data import source as source_module
from autovend.data.contract import ORDERS
from autovend.data.load import load_source
from autovend.errors import SourceError
from tests.data.make_source import source_tables, write_source


def test_load_source_types(tmp_path):
    source = load_source(write_source(tmp_path / "src"))
    assert source.meta.name == "tiny-op-2025"
    orders = source.orders
    assert list(orders.columns) == list(ORDERS.column_names)
    assert str(orders["order_id"].dtype) == "str"
    assert orders["ts"].dtype == "datetime64[ns]"
    assert orders["qty"].dtype == "int64" and orders["qty"].sum() == 12
    assert orders["unit_price"].dtype == "float64"
    assert orders["status"].to_list() == [
        "completed",
        "completed",
        "completed",
        "refunded",
        "completed",
        "failed",
        "completed",
        "completed",
    ]
    assert source.orders_have_time and source.inventory_have_time
    assert source.machines["capacity"].to_list()[0] == 300.0 and np.isnan(source.machines["capacity"].iloc[1])
    assert source.machines["location"].isna().to_list() == [False, True, False]
    assert source.products["unit_cost"].dtype == "float64"
    assert source.inventory is not None and source.inventory["shelf_qty"].dtype == "int64"
    assert source.calendar is not None and source.calendar["is_workday"].dtype == bool
    assert source.calendar["is_workday"].to_list() == [True, True, False]
    assert source.weather is not None and source.weather["date"].dtype == "datetime64[ns]"
    assert len(source.content_hash) == 64


def test_load_source_drops_extra_columns_and_fills_absent_optional_ones(tmp_path):
    tables = source_tables()
    tables["orders"] = tables["orders"].drop(columns=["status"]).assign(note="x")
    source = load_source(write_source(tmp_path / "src", tables={**tables, "inventory": None, "weather": None}))
    assert "note" not in source.orders.columns
    assert (source.orders["status"] == "completed").all()
    assert source.inventory is None and source.weather is None
    assert not source.inventory_have_time


def test_load_source_date_only_orders(tmp_path):
    tables = source_tables()
    tables["orders"]["ts"] = tables["orders"]["ts"].str[:10]
    source = load_source(write_source(tmp_path / "src", tables=tables))
    assert not source.orders_have_time
    assert source.orders["ts"].iloc[0] == pd.Timestamp("2025-03-03")


def test_load_source_parquet_matches_csv(tmp_path):
    from_csv = load_source(write_source(tmp_path / "csv"))
    from_parquet = load_source(write_source(tmp_path / "parquet", fmt="parquet"))
    for name in ("machines", "products", "orders", "inventory", "weather", "calendar"):
        pd.testing.assert_frame_equal(getattr(from_csv, name), getattr(from_parquet, name), check_dtype=True)


def test_load_source_refuses_a_broken_source_with_the_report(tmp_path):
    tables = source_tables()
    tables["orders"].loc[2, "qty"] = "0"
    with pytest.raises(SourceError) as err:
        load_source(write_source(tmp_path / "src", tables=tables))
    assert "orders.csv, row 3, column qty: must be ≥ 1 (value '0')" in str(err.value)


def test_the_readers_import_neither_the_checks_nor_the_loader():
    """source.py -> check.py -> source.py was a cycle (broken by a lazy import); the loader now sits on top."""
    tree = ast.parse(Path(source_module.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert "autovend.data.contract" in imported
    assert not imported & {"autovend.data.check", "autovend.data.load"}

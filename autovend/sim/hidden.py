"""Evaluation-only records (unmet and expected demand, shocks, actual lead times), kept apart from the agent.

They are stored as columnar chunks in memory (fast to append, small to pickle) and read as
DataFrames; `to_sqlite()` builds a separate SQLite database from them for SQL users. The tables and
their columns are documented with the schema in `autovend.sim.records` (hidden tables).
"""

from __future__ import annotations

import sqlite3
from itertools import chain
from typing import Any

import numpy as np
import pandas as pd

HIDDEN_COLUMNS: dict[str, tuple[str, ...]] = {
    "demand": ("day", "device_id", "sku_id", "shelf_units", "price", "rate", "demand", "sales", "lost"),
    "shocks": ("day", "device_id", "xi"),
    "machine_days": (
        "day",
        "device_id",
        "units_before",
        "expired_before",
        "n_skus",
        "free_capacity",
        "empty",
        "sold_out",
        "units_sold",
        "revenue",
        "gross_profit",
        "expected_units",
        "lost_units",
    ),
    "lead_times": ("order_id", "placed_day", "lead_days", "arrival_day"),
}


_INSERT_BLOCK = 64  # rows per multi-row INSERT in `to_sqlite`


class HiddenLog:
    """Append-only tables of evaluation data; never shown to the agent (not in `Simulator.records`)."""

    def __init__(self) -> None:
        self._chunks: dict[str, list[dict[str, Any]]] = {t: [] for t in HIDDEN_COLUMNS}
        self._rows: dict[str, list[tuple[Any, ...]]] = {t: [] for t in HIDDEN_COLUMNS}
        self._cache: dict[str, pd.DataFrame] = {}

    @property
    def tables(self) -> tuple[str, ...]:
        """Names of the hidden tables."""
        return tuple(HIDDEN_COLUMNS)

    def append(self, table: str, columns: dict[str, Any]) -> None:
        """Add rows given column-wise (equal-length arrays or lists, one per column of the table)."""
        expected = HIDDEN_COLUMNS[table]
        if tuple(columns) != expected:
            raise ValueError(f"hidden table {table} takes columns {expected}, got {tuple(columns)}")
        self._settle(table)
        self._chunks[table].append({c: np.asarray(v) for c, v in columns.items()})
        self._cache.pop(table, None)

    def append_row(self, table: str, row: tuple[Any, ...]) -> None:
        """Add one row (values in the table's column order); cheap for tables written item by item."""
        if len(row) != len(HIDDEN_COLUMNS[table]):
            raise ValueError(f"hidden table {table} takes {len(HIDDEN_COLUMNS[table])} values, got {len(row)}")
        self._rows[table].append(row)
        self._cache.pop(table, None)

    def _settle(self, table: str) -> None:
        """Turn the rows added one by one into a chunk (keeps the write order)."""
        rows = self._rows[table]
        if rows:
            cols = HIDDEN_COLUMNS[table]
            self._chunks[table].append({c: np.asarray(v) for c, v in zip(cols, zip(*rows, strict=True), strict=True)})
            self._rows[table] = []

    def frame(self, table: str) -> pd.DataFrame:
        """A table as a DataFrame (a copy; rows in the order they were written)."""
        if table not in self._cache:
            self._settle(table)
            cols = HIDDEN_COLUMNS[table]
            chunks = self._chunks[table]
            if chunks:
                data = {c: np.concatenate([ch[c] for ch in chunks]) for c in cols}
            else:
                data = {c: np.array([]) for c in cols}
            self._cache[table] = pd.DataFrame(data, columns=list(cols))
        return self._cache[table].copy()

    def to_sqlite(self) -> sqlite3.Connection:
        """A new in-memory SQLite database holding every hidden table (a snapshot).

        The same database as `frame(table).to_sql(table, conn, index=False)` for each table (pandas'
        CREATE TABLE, the same values, NaN as NULL), with the rows inserted straight from the columns.
        """
        conn = sqlite3.connect(":memory:")
        for table in HIDDEN_COLUMNS:
            frame = self.frame(table)
            conn.execute(pd.io.sql.get_schema(frame, table))
            names = ",".join(f'"{c}"' for c in frame.columns)
            marks = ",".join("?" * len(frame.columns))
            rows = list(zip(*(_sql_values(frame[c]) for c in frame.columns), strict=True))
            full = len(rows) - len(rows) % _INSERT_BLOCK
            if full:  # many rows per INSERT statement: about twice as fast as one by one
                block = f'INSERT INTO "{table}" ({names}) VALUES ' + ",".join([f"({marks})"] * _INSERT_BLOCK)
                for i in range(0, full, _INSERT_BLOCK):
                    conn.execute(block, list(chain.from_iterable(rows[i : i + _INSERT_BLOCK])))
            conn.executemany(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', rows[full:])
            conn.commit()
        return conn

    def __getstate__(self) -> dict[str, Any]:
        for table in HIDDEN_COLUMNS:
            self._settle(table)
        return {"chunks": self._chunks}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._chunks = state["chunks"]
        self._rows = {t: [] for t in HIDDEN_COLUMNS}
        self._cache = {}


def _sql_values(column: pd.Series) -> list[Any]:
    """A column's values as Python objects for SQLite, missing values as None (what pandas' `to_sql` inserts)."""
    values: list[Any] = column.to_numpy().tolist()
    if column.hasnans:
        values = [None if miss else v for v, miss in zip(values, column.isna().tolist(), strict=True)]
    return values

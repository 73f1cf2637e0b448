"""The read-only SQL sandbox of `query_sql` over the agent-visible operating records.

Each query runs on a private in-memory copy of the records (`RecordStore.serialize()` ->
`deserialize()`), refreshed only when the records change, so nothing a query does can reach the
simulator's own database. On that copy, in depth:

- the statement must start with SELECT, WITH or VALUES, and only one statement is run;
- `PRAGMA query_only` is on and an authorizer allows nothing but reading tables, calling functions
  (except extension loaders) and recursive CTEs: writes, schema changes, ATTACH (and so VACUUM
  INTO), PRAGMA, transactions and `load_extension` are refused;
- SQLite limits cap strings and blobs at 1,000,000 bytes, the SQL text at 100,000 characters and
  attached databases at 0;
- a progress handler stops the query after the time limit (2 s), and at most 500 rows are returned
  (the result says when more existed).

The hidden evaluation log is a separate store and is never in the copy.
"""

from __future__ import annotations

import math
import re
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from autovend.sim.records import RECORD_TABLES, RecordStore
from autovend.tools.context import ToolError

TIME_LIMIT_S = 2.0
MAX_ROWS = 500
MAX_CELL_CHARS = 2_000  # longer text cells are cut in the result
PROGRESS_EVERY = 2_000  # SQLite VM steps between deadline checks
LIMITS: dict[str, int] = {
    "SQLITE_LIMIT_LENGTH": 1_000_000,
    "SQLITE_LIMIT_SQL_LENGTH": 100_000,
    "SQLITE_LIMIT_ATTACHED": 0,
}
ALLOWED_FIRST_WORDS = ("select", "with", "values")
DENIED_FUNCTIONS = frozenset(
    {"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit", "zipfile", "sqlar_uncompress"}
)
_ALLOWED_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, getattr(sqlite3, "SQLITE_RECURSIVE", 33)})
_LEADING = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*", re.DOTALL)

# One line per agent-visible table: what a row is (columns come from the table definitions).
TABLE_NOTES: dict[str, str] = {
    "devices": "the machines (fixed for the run)",
    "catalog": "the products; ref_price (suggested price) and unit_cost in CNY, shelf_life_days from arrival",
    "orders": "one row per accepted order line; eta_day is the promised arrival day, arrived_day stays NULL "
    "until the units are delivered",
    "arrivals": "deliveries into the warehouse at the start of `day`; expiry_day is the first day on which "
    "those units count as expired",
    "shelf_events": "accepted on-site operations: kind is restock (warehouse to machine), reduce or delist "
    "(machine to warehouse); expired_qty of the qty moved were expired",
    "price_changes": "accepted price changes; a price never changed is the catalog ref_price",
    "discards": "warehouse units destroyed; cost_written_off is the cost of the unexpired ones among them",
    "daily_sales": "one row per machine, product and settled day with at least one sale; revenue in CNY, "
    "cost = cost of the unexpired units sold, expired_units of the units were expired and drew the fine",
    "daily_costs": "one row per settled day and kind (purchase, warehouse_rent, daily_fee, visit, "
    "expired_fine), zeros included; amounts are positive cash outflows",
    "visits": "machines visited on `day` and the number of accepted operations there",
    "daily_summary": "one row per settled day: cash and net_assets at the close, sales, each cost, expiry "
    "and discard write-offs, net (the day's change in net assets), visits, and units and values at cost "
    "(unexpired only) on shelves, in the warehouse and in transit",
}


def schema_text() -> str:
    """The agent-visible schema: one line per table with its columns and what a row means."""
    lines = ["Tables (SQLite; `day` is the simulation day, day 1 = first day; dates are 'YYYY-MM-DD'; money is CNY):"]
    for t in RECORD_TABLES:
        lines.append(f"- {t.name}({', '.join(t.column_names)}): {TABLE_NOTES[t.name]}.")
    return "\n".join(lines)


def _authorize(action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None) -> int:
    """Allow reading and computing only (see the module docstring)."""
    if action in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION:
        return sqlite3.SQLITE_DENY if (arg2 or "").lower() in DENIED_FUNCTIONS else sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def first_word(sql: str) -> str:
    """The first keyword of a statement after leading blanks and comments, lower-cased ('' if none)."""
    rest = sql[_LEADING.match(sql).end() :]  # type: ignore[union-attr]
    m = re.match(r"[A-Za-z_]+", rest)
    return m.group(0).lower() if m else ""


def _cell(value: Any) -> tuple[Any, bool]:
    """A JSON-ready cell and whether it was cut."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value), False
    if isinstance(value, bytes):
        text = "x'" + value[: MAX_CELL_CHARS // 2].hex() + "'"
        return (text + "...", True) if len(value) > MAX_CELL_CHARS // 2 else (text, False)
    if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
        return value[:MAX_CELL_CHARS] + "...", True
    return value, False


@dataclass(eq=False)
class SqlSandbox:
    """Runs agent SQL on a read-only private copy of a `RecordStore` (see the module docstring)."""

    records: RecordStore
    time_limit_s: float = TIME_LIMIT_S
    max_rows: int = MAX_ROWS
    _conn: sqlite3.Connection | None = None
    _version: tuple[int, int] | None = None
    _deadline: float = 0.0

    def _connection(self) -> sqlite3.Connection:
        live = self.records.connection
        version = (id(live), live.total_changes)
        if self._conn is not None and version == self._version:
            return self._conn
        self.close()
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.deserialize(self.records.serialize())
        if hasattr(conn, "enable_load_extension"):
            conn.enable_load_extension(False)
        for name, value in LIMITS.items():
            code = getattr(sqlite3, name, None)
            if code is not None:
                conn.setlimit(code, value)
        conn.execute("PRAGMA query_only = ON")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchall()  # parse the schema before the authorizer
        conn.set_authorizer(_authorize)
        conn.set_progress_handler(self._progress, PROGRESS_EVERY)
        self._conn, self._version = conn, version
        return conn

    def _progress(self) -> int:
        return 1 if time.monotonic() > self._deadline else 0

    def run(self, sql: str) -> dict[str, Any]:
        """Run one SELECT; return columns, rows (at most `max_rows`), truncation flags and the time taken.

        Raises `ToolError` with a reason and a hint for anything refused or failing.
        """
        word = first_word(sql)
        if word not in ALLOWED_FIRST_WORDS:
            shown = word.upper() or "an empty statement"
            raise ToolError(
                f"query_sql only runs a read-only SELECT (it may start with WITH or VALUES); got {shown}. "
                "The records cannot be changed; use the action tools to act."
            )
        conn = self._connection()
        start = time.monotonic()
        self._deadline = start + self.time_limit_s
        try:
            cur = conn.execute(sql)
            rows = cur.fetchmany(self.max_rows + 1)
            columns = [d[0] for d in cur.description or ()]
            cur.close()
        except (sqlite3.Error, sqlite3.Warning) as exc:
            raise ToolError(self._explain(exc, time.monotonic() - start)) from None
        elapsed = time.monotonic() - start
        truncated = len(rows) > self.max_rows
        rows = rows[: self.max_rows]
        cut = 0
        out = []
        for row in rows:
            cells = []
            for value in row:
                cell, was_cut = _cell(value)
                cut += was_cut
                cells.append(cell)
            out.append(cells)
        result: dict[str, Any] = {
            "columns": columns,
            "rows": out,
            "row_count": len(out),
            "truncated": truncated,
            "elapsed_ms": round(elapsed * 1000, 1),
        }
        if truncated:
            result["note"] = f"only the first {self.max_rows} rows are shown; aggregate or add LIMIT/WHERE"
        if cut:
            result["cells_cut"] = cut
        return result

    def _explain(self, exc: BaseException, elapsed: float) -> str:
        text = str(exc)
        if "interrupted" in text and elapsed >= self.time_limit_s * 0.9:
            return (
                f"query_sql stopped the query after {self.time_limit_s:g} s (the time limit). "
                "Narrow it with WHERE on day/device_id/sku_id, aggregate, or bound recursive CTEs."
            )
        if "not authorized" in text or "prohibited" in text or "readonly" in text:
            return (
                "query_sql is read-only: only SELECT over the record tables is allowed "
                "(no writes, schema changes, PRAGMA, ATTACH, transactions or extensions)."
            )
        if "one statement" in text:
            return "query_sql runs exactly one statement; remove everything after the first ';'."
        if "no such table" in text:
            names = ", ".join(t.name for t in RECORD_TABLES)
            return f"query_sql: {text}. The tables are: {names}."
        if "too big" in text:
            return f"query_sql: {text} (strings and blobs are limited to 1,000,000 bytes)."
        return f"query_sql: SQLite error: {text}. Check the statement against the table list."

    def close(self) -> None:
        """Drop the private copy."""
        if self._conn is not None:
            self._conn.close()
        self._conn, self._version = None, None

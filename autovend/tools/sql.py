"""The read-only SQL sandbox of `query_sql` over the agent-visible operating records.

Each query runs in a separate process (`autovend.tools.sql_worker`) on a private in-memory copy of
the records (`RecordStore.serialize()`), so nothing a query does can reach the simulator's own
database. When the records have changed, the process replays the writes made since (the store's
journal, `RecordStore.take_journal`) rather than receiving the whole database again; if the rows they
changed do not add up to the store's own count, the whole database is sent. On that copy, in depth:

- the statement must start with SELECT, WITH or VALUES, and only one statement is run;
- `PRAGMA query_only` is on and an authorizer allows nothing but reading tables, calling functions
  (except extension loaders) and recursive CTEs: writes, schema changes, ATTACH (and so VACUUM
  INTO), PRAGMA, transactions and `load_extension` are refused;
- SQLite limits cap strings and blobs at 1,000,000 bytes, LIKE and GLOB patterns at 100 characters,
  the SQL text at 100,000 characters and attached databases at 0;
- the time limit (2 s) holds for every statement: a progress handler stops it between SQLite
  steps, and one that is still inside a single step (a LIKE or instr over long strings can run for
  minutes there) is stopped by killing the process shortly after the limit; the next query starts
  a new one;
- at most 500 rows are returned (the result says when more existed), long text cells are cut.

The hidden evaluation log is a separate store and is never in the copy.
"""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any

from autovend.currency import minor_unit
from autovend.sim.records import RECORD_TABLES, RecordStore
from autovend.tools import sql_worker
from autovend.tools.errors import ToolError
from autovend.tools.schemas import clip
from autovend.tools.sql_worker import LIMITS, read_frame, send_frame

TIME_LIMIT_S = 2.0
MAX_ROWS = 500
KILL_AFTER_S = 0.5  # a query process that has not answered this long after the time limit is killed
MAX_MESSAGE_CHARS = 300  # SQLite's error text is cut here (it can quote long parts of the statement)
ALLOWED_FIRST_WORDS = ("select", "with", "values")
_LEADING = re.compile(r"\A(?:\s+|--[^\n]*(?:\n|\Z)|/\*.*?\*/)*", re.DOTALL)

# One line per agent-visible table: what a row is (columns come from the table definitions).
TABLE_NOTES: dict[str, str] = {
    "devices": "the machines (fixed for the run)",
    "catalog": "the products; ref_price (suggested price) and unit_cost in {currency}, shelf_life_days from arrival",
    "orders": "one row per accepted order line; eta_day is the promised arrival day, arrived_day stays NULL "
    "until the units are delivered",
    "arrivals": "deliveries into the warehouse at the start of `day`; expiry_day is the first day on which "
    "those units count as expired",
    "shelf_events": "accepted on-site operations: kind is restock (warehouse to machine), reduce or delist "
    "(machine to warehouse); expired_qty of the qty moved were expired",
    "price_changes": "accepted price changes; a price never changed is the catalog ref_price",
    "discards": "warehouse units destroyed; cost_written_off is the cost of the unexpired ones among them",
    "daily_sales": "one row per machine, product and settled day with at least one sale; revenue in {currency}, "
    "cost = cost of the unexpired units sold, expired_units of the units were expired and drew the fine",
    "daily_costs": "one row per settled day and kind (purchase, warehouse_rent, daily_fee, visit, "
    "expired_fine), zeros included; amounts are positive cash outflows",
    "visits": "machines visited on `day` and the number of accepted operations there",
    "daily_summary": "one row per settled day: cash and net_assets at the close, sales, each cost, expiry "
    "and discard write-offs, net (the day's change in net assets), visits, and units and values at cost "
    "(unexpired only) on shelves, in the warehouse and in transit",
}


def schema_text(currency: str) -> str:
    """The agent-visible schema: one line per table with its columns and what a row means (money in `currency`)."""
    lines = [
        "Tables (SQLite; `day` is the simulation day, day 1 = first day; dates are 'YYYY-MM-DD'; "
        f"money is {currency}, to the {minor_unit(currency)}):"
    ]
    for t in RECORD_TABLES:
        note = TABLE_NOTES[t.name].replace("{currency}", currency)
        lines.append(f"- {t.name}({', '.join(t.column_names)}): {note}.")
    return "\n".join(lines)


def first_word(sql: str) -> str:
    """The first keyword of a statement after leading blanks and comments, lower-cased ('' if none)."""
    rest = sql[_LEADING.match(sql).end() :]  # type: ignore[union-attr]
    m = re.match(r"[A-Za-z_]+", rest)
    return m.group(0).lower() if m else ""


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Kill a query process and release its pipes (also run when its owner is collected or at exit)."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            pipe.close()


class _QueryProcess:
    """One running `sql_worker` process: a request and its reply at a time; `kill` works from any thread."""

    def __init__(self) -> None:
        if not sys.executable:
            raise ToolError("query_sql is unavailable: the Python interpreter that would run queries is unknown")
        self.proc = subprocess.Popen(
            [sys.executable, "-I", sql_worker.__file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        self.killed = False  # set when `kill` ended the process
        self.broken = False  # set when a request got no reply
        self._finalizer = weakref.finalize(self, _end, self.proc)

    def ask(self, message: tuple[Any, ...], timeout_s: float | None, blob: bytes = b"") -> tuple[Any, ...] | None:
        """Send one request; its reply, or None if the process ended first (killed after `timeout_s`)."""
        timer = None
        if timeout_s is not None:
            timer = threading.Timer(timeout_s, self.kill)
            timer.daemon = True
            timer.start()
        try:
            send_frame(self.proc.stdin, message, blob)  # type: ignore[arg-type]
            frame = read_frame(self.proc.stdout)  # type: ignore[arg-type]
            reply = None if frame is None else frame[0]
        except (OSError, ValueError, EOFError, pickle.UnpicklingError):  # a broken pipe or a frame cut off
            reply = None
        finally:
            if timer is not None:
                timer.cancel()
        self.broken |= reply is None
        return reply

    def kill(self) -> None:
        """Stop the process at once (its pending request then gets no reply)."""
        self.killed = True
        if self.proc.poll() is None:
            self.proc.kill()

    @property
    def usable(self) -> bool:
        """True while the process can take the next request."""
        return not (self.killed or self.broken) and self.proc.poll() is None

    def close(self) -> None:
        """End the process."""
        self._finalizer()


@dataclass(eq=False)
class SqlSandbox:
    """Runs agent SQL on a read-only private copy of a `RecordStore` (see the module docstring)."""

    records: RecordStore
    time_limit_s: float = TIME_LIMIT_S
    max_rows: int = MAX_ROWS
    _process: _QueryProcess | None = None
    _version: tuple[int, int] | None = None

    def _ready(self) -> _QueryProcess:
        """The query process holding the current records (started or refreshed as needed)."""
        live = self.records.connection
        version = (id(live), live.total_changes)
        if self._process is not None and self._process.usable and version == self._version:
            return self._process
        journal = self.records.take_journal()
        if self._replay(journal, version) and self._process is not None:
            return self._process
        if self._process is None or not self._process.usable:
            self.close()
            self._process = _QueryProcess()
        if self._process.ask(("load",), None, self.records.serialize()) != ("loaded",):
            self.close()
            raise ToolError("query_sql: the query process could not load the records; try again")
        self._version = version
        return self._process

    def _replay(self, journal: list[tuple[str, list[Any]]] | None, version: tuple[int, int]) -> bool:
        """Bring the running process's copy up to `version` with the store's journal; False if it cannot."""
        process, last = self._process, self._version
        if process is None or not process.usable or last is None or journal is None or last[0] != version[0]:
            return False
        if process.ask(("apply", tuple(journal), version[1] - last[1]), None) != ("applied",):
            return False
        self._version = version
        return True

    def run(self, sql: str) -> dict[str, Any]:
        """Run one SELECT; return columns, rows (at most `max_rows`), truncation flags and the time taken.

        Raises `ToolError` with a reason and a hint for anything refused, failing or stopped.
        """
        word = first_word(sql)
        if word not in ALLOWED_FIRST_WORDS:
            shown = clip(word.upper()) or "an empty statement"
            raise ToolError(
                f"query_sql only runs a read-only SELECT (it may start with WITH or VALUES); got {shown}. "
                "The records cannot be changed; use the action tools to act."
            )
        process = self._ready()
        start = time.monotonic()
        reply = process.ask(("query", sql, self.time_limit_s, self.max_rows), self.time_limit_s + KILL_AFTER_S)
        elapsed = time.monotonic() - start
        if not process.usable:
            self.close()
        if reply is None and not process.killed:
            raise ToolError("query_sql: the query process ended before answering; the query may be too big to run")
        if reply is None or reply[0] == "stopped":
            raise ToolError(
                f"query_sql stopped the query after {self.time_limit_s:g} s (the time limit). "
                "Narrow it with WHERE on day/device_id/sku_id, aggregate, or bound recursive CTEs."
            )
        if reply[0] != "rows":
            raise ToolError(self._explain(str(reply[-1])))
        _, columns, rows, truncated, cut = reply
        result: dict[str, Any] = {
            "columns": list(columns),
            "rows": [list(row) for row in rows],
            "row_count": len(rows),
            "truncated": truncated,
            "elapsed_ms": round(elapsed * 1000, 1),
        }
        if truncated:
            result["note"] = f"only the first {self.max_rows} rows are shown; aggregate or add LIMIT/WHERE"
        if cut:
            result["cells_cut"] = cut
        return result

    def _explain(self, text: str) -> str:
        """A SQLite error message as a reason with a hint (the message cut to `MAX_MESSAGE_CHARS`)."""
        if "not authorized" in text or "prohibited" in text or "readonly" in text:
            return (
                "query_sql is read-only: only SELECT over the record tables is allowed "
                "(no writes, schema changes, PRAGMA, ATTACH, transactions or extensions)."
            )
        if "one statement" in text:
            return "query_sql runs exactly one statement; remove everything after the first ';'."
        text = clip(text, MAX_MESSAGE_CHARS)
        if "no such table" in text:
            names = ", ".join(t.name for t in RECORD_TABLES)
            return f"query_sql: {text}. The tables are: {names}."
        if "too big" in text:
            return f"query_sql: {text} (strings and blobs are limited to {LIMITS['SQLITE_LIMIT_LENGTH']:,} bytes)."
        if "pattern too complex" in text:
            n = LIMITS["SQLITE_LIMIT_LIKE_PATTERN_LENGTH"]
            return f"query_sql: {text} (LIKE and GLOB patterns are limited to {n} characters; use a shorter pattern)."
        return f"query_sql: SQLite error: {text}. Check the statement against the table list."

    def close(self) -> None:
        """End the query process (and with it the private copy)."""
        if self._process is not None:
            self._process.close()
        self._process, self._version = None, None

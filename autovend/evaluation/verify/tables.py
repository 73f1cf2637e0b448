"""records.sqlite, hidden.sqlite and daily.csv against the replay's: byte for byte, else table by table, row by row.

A file equal byte for byte to the replay's is equal. Otherwise (a tampered file, or another SQLite or pandas
version writing the same data differently) the recorded file is opened read-only and compared: the schema
(every table, index and its SQL), then each table's rows in rowid order, value by value (numbers to 1e-9
relative). The first difference names the file, the table, the 1-based row with its leading key values, and the
column; a deleted or added row shows as the first row that differs and the two row counts.
"""

from __future__ import annotations

import contextlib
import io
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd

from autovend.evaluation.verify.diff import Difference, jsonable, same

MISSING = "<missing>"
_KEYS = 3  # leading columns shown to name a row


def missing(name: str) -> Difference:
    """The difference of a file the folder lacks and the replay writes."""
    return Difference(name, "file", MISSING, "<written by the replay>", why="missing (the replay writes it)")


@contextlib.contextmanager
def _read_only(path: Path, name: str) -> Iterator[sqlite3.Connection]:
    """A connection that reads `path` and nothing else: read-only, no code from the schema (trusted_schema off)."""
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as exc:
        raise _Unreadable(Difference(name, "file", None, None, why=f"cannot be opened ({exc})")) from None
    try:
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.execute("PRAGMA query_only = ON")
        yield conn
    finally:
        conn.close()


class _Unreadable(Exception):
    def __init__(self, difference: Difference) -> None:
        super().__init__(difference.message())
        self.difference = difference


def compare_sqlite(name: str, recorded: Path, replayed: Path) -> Difference | None:
    """The first difference between the folder's SQLite file and the replay's (module docstring), or None."""
    if not recorded.is_file():
        return missing(name)
    if recorded.read_bytes() == replayed.read_bytes():
        return None
    try:
        with _read_only(recorded, name) as a, _read_only(replayed, name) as b:
            return _compare_databases(name, a, b)
    except _Unreadable as exc:
        return exc.difference
    except sqlite3.Error as exc:
        return Difference(name, "file", None, None, why=f"is not a SQLite database AutoVend wrote ({exc})")


def _schema(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()


def _compare_databases(name: str, a: sqlite3.Connection, b: sqlite3.Connection) -> Difference | None:
    want = _schema(b)
    have = _schema(a)
    if have != want:
        extra = [e for e in have if e not in want]
        lost = [e for e in want if e not in have]
        if extra:
            return Difference(name, "schema", _entry(extra[0]), None, why=f"it holds {_entry(extra[0])}, which the "
                              "replay's does not")  # fmt: skip
        if lost:
            return Difference(name, "schema", None, _entry(lost[0]), why=f"it lacks {_entry(lost[0])}")
        return Difference(name, "schema", None, None, why="its schema lists the same entries in another way")
    for kind, table, _, _ in want:
        if kind == "table":
            diff = _compare_table(name, table, a, b)
            if diff is not None:
                return diff
    return None


def _entry(row: tuple[Any, ...] | None) -> str:
    return "nothing" if row is None else f"{row[0]} {row[1]}: {row[3] or '(automatic)'}"


def _compare_table(name: str, table: str, a: sqlite3.Connection, b: sqlite3.Connection) -> Difference | None:
    quoted = '"' + table.replace('"', '""') + '"'
    cols = [r[1] for r in b.execute(f"PRAGMA table_info({quoted})")]
    query = f"SELECT * FROM {quoted} ORDER BY rowid"
    have, want = a.execute(query).fetchall(), b.execute(query).fetchall()
    if have == want:
        return None
    for i in range(min(len(have), len(want))):
        x, y = have[i], want[i]
        if x == y:
            continue
        for col, u, v in zip(cols, x, y, strict=True):
            if not same(u, v):
                label = _label(cols, x if len(have) <= len(want) else y)
                why = None
                if len(have) != len(want):
                    why = (
                        f"recorded {_value(u)}, replayed {_value(v)} ({len(have):,} rows recorded, {len(want):,} "
                        f"replayed: a row deleted or added before here)"
                    )
                return Difference(name, f"{col}{label}", u, v, table=table, row=i + 1, why=why)
    if len(have) != len(want):
        row = min(len(have), len(want)) + 1
        return Difference(name, "rows", len(have), len(want), table=table, row=row)
    return None


def _label(cols: list[str], row: tuple[Any, ...]) -> str:
    keys = ", ".join(f"{c}={row[i]}" for i, c in enumerate(cols[:_KEYS]))
    return f" (row {keys})"


def _value(x: Any) -> str:
    return "null" if x is None else repr(x) if isinstance(x, str) else str(x)


def compare_daily(name: str, recorded: Path, replayed: Path) -> Difference | None:
    """daily.csv against the replay's: equal bytes, else cell by cell (numbers to 1e-9 relative)."""
    if not recorded.is_file():
        return missing(name)
    data = recorded.read_bytes()
    if data == replayed.read_bytes():
        return None
    try:
        a = pd.read_csv(io.BytesIO(data))
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        return Difference(name, "file", None, None, why=f"cannot be read as CSV ({exc})")
    b = pd.read_csv(replayed)
    if list(a.columns) != list(b.columns):
        return Difference(name, "columns", list(a.columns), list(b.columns))
    for i in range(max(len(a), len(b))):
        if i >= len(a) or i >= len(b):
            return Difference(name, "rows", len(a), len(b), row=i + 1)
        ra, rb = a.iloc[i].to_dict(), b.iloc[i].to_dict()
        for col in a.columns:
            va, vb = jsonable(ra[col]), jsonable(rb[col])
            if not same(va, vb):
                return Difference(name, str(col), va, vb, day=int(rb["day"]), row=i + 1)
    if a.to_csv(index=False).encode("utf-8") == data:
        return None  # the same figures to 1e-9 relative, written as AutoVend writes them
    text = "the values are those of the replay, but the file is not written as AutoVend writes it"
    return Difference(name, "text", None, None, why=text)

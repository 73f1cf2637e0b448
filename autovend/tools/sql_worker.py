"""The process that runs `query_sql` statements on a guarded in-memory copy of the records.

`autovend.tools.sql.SqlSandbox` starts this file as `python -I sql_worker.py` and talks to it over
stdin/stdout in frames: two 8-byte big-endian lengths, a pickle of plain values (tuples, str, bytes,
int, float, None; loading refuses anything else) and a raw blob, so that a database is sent as it
is, without a pickle copy. Requests and replies:

- ("load",) with the blob -> ("loaded",): replace the copy with the blob, the bytes of
  `sqlite3.Connection.serialize()`;
- ("apply", statements, changes) -> ("applied",) or ("diverged",): run the parent's own writes
  (a tuple of (sql, parameter rows), from `RecordStore.take_journal`) on the copy, with the guards
  off for that moment only; "diverged" when they changed another number of rows than `changes`
  (the parent's count), and then the copy must be loaded again;
- ("query", sql, time_limit_s, max_rows) -> ("rows", columns, rows, more, cut), ("stopped",) when the
  time limit stopped the statement, or ("error", message) with SQLite's message.

A progress handler stops a statement between virtual-machine steps once the time limit has passed;
one step can run far longer (a single LIKE, GLOB, instr or replace over long strings), and nothing
inside the process can interrupt it, so the parent kills the process when no reply comes in time.
Rows come back with long cells already cut, so a reply is small. If the parent dies, the process
ends within a second even in the middle of a statement. Only the standard library is imported,
which keeps the start of a (re)started process short.
"""

from __future__ import annotations

import io
import math
import os
import pickle
import signal
import sqlite3
import struct
import sys
import threading
import time
from typing import IO, Any

MAX_CELL_CHARS = 2_000  # longer text cells are cut in the result
PROGRESS_EVERY = 2_000  # SQLite VM steps between deadline checks
PARENT_CHECK_S = 0.5  # how often the process looks whether its parent is still there
LIMITS: dict[str, int] = {
    "SQLITE_LIMIT_LENGTH": 1_000_000,
    "SQLITE_LIMIT_SQL_LENGTH": 100_000,
    "SQLITE_LIMIT_LIKE_PATTERN_LENGTH": 100,
    "SQLITE_LIMIT_ATTACHED": 0,
}
DENIED_FUNCTIONS = frozenset(
    {"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit", "zipfile", "sqlar_uncompress"}
)
_ALLOWED_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, getattr(sqlite3, "SQLITE_RECURSIVE", 33)})
_HEADER = struct.Struct(">QQ")  # sizes of the pickle and of the blob


def _authorize(action: int, arg1: str | None, arg2: str | None, db: str | None, trigger: str | None) -> int:
    """Allow reading tables, calling functions (except extension loaders) and recursive CTEs only."""
    if action in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_FUNCTION:
        return sqlite3.SQLITE_DENY if (arg2 or "").lower() in DENIED_FUNCTIONS else sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def open_copy(data: bytes) -> sqlite3.Connection:
    """An in-memory database holding `data`, with the limits, `query_only` and the authorizer on."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    conn.deserialize(data)
    if hasattr(conn, "enable_load_extension"):
        conn.enable_load_extension(False)
    for name, value in LIMITS.items():
        code = getattr(sqlite3, name, None)
        if code is not None:
            conn.setlimit(code, value)
    conn.execute("PRAGMA query_only = ON")
    conn.execute("SELECT count(*) FROM sqlite_master").fetchall()  # parse the schema before the authorizer
    conn.set_authorizer(_authorize)
    return conn


def apply_writes(conn: sqlite3.Connection, statements: tuple[Any, ...], changes: int) -> bool:
    """Replay the parent's writes on the copy (guards off meanwhile); True when they changed `changes` rows."""
    before = conn.total_changes
    conn.set_authorizer(None)
    conn.execute("PRAGMA query_only = OFF")
    try:
        conn.execute("BEGIN")
        for sql, rows in statements:
            conn.executemany(sql, rows)
        conn.execute("COMMIT")
    except sqlite3.Error:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return False
    finally:
        conn.execute("PRAGMA query_only = ON")
        conn.set_authorizer(_authorize)
    return conn.total_changes - before == changes


def cell(value: Any) -> tuple[Any, bool]:
    """A JSON-ready cell and whether it was cut."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value), False
    if isinstance(value, bytes):
        text = "x'" + value[: MAX_CELL_CHARS // 2].hex() + "'"
        return (text + "...", True) if len(value) > MAX_CELL_CHARS // 2 else (text, False)
    if isinstance(value, str) and len(value) > MAX_CELL_CHARS:
        return value[:MAX_CELL_CHARS] + "...", True
    return value, False


def run_query(conn: sqlite3.Connection, sql: str, time_limit_s: float, max_rows: int) -> tuple[Any, ...]:
    """Run one statement on `conn` under the time limit; the reply tuple (see the module docstring)."""
    deadline = time.monotonic() + time_limit_s
    conn.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, PROGRESS_EVERY)
    try:
        cur = conn.execute(sql)
        rows = cur.fetchmany(max_rows + 1)
        columns = tuple(d[0] for d in cur.description or ())
        cur.close()
    except (sqlite3.Error, sqlite3.Warning) as exc:
        if "interrupted" in str(exc) and time.monotonic() > deadline:
            return ("stopped",)
        return ("error", str(exc))
    finally:
        conn.set_progress_handler(None, 0)
    more = len(rows) > max_rows
    cut = 0
    out = []
    for row in rows[:max_rows]:
        cells = []
        for value in row:
            shown, was_cut = cell(value)
            cut += was_cut
            cells.append(shown)
        out.append(tuple(cells))
    return ("rows", columns, tuple(out), more, cut)


# ---------------------------------------------------------------------------------------------- frames


class _PlainUnpickler(pickle.Unpickler):
    """Loads plain values only: a frame that names any class or function is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a query_sql frame may hold plain values only, not {module}.{name}")


def send_frame(stream: IO[bytes], message: tuple[Any, ...], blob: bytes = b"") -> None:
    """Write one frame (`message` and `blob`) and flush."""
    body = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(body), len(blob)) + body)
    if blob:
        stream.write(blob)
    stream.flush()


def read_frame(stream: IO[bytes]) -> tuple[tuple[Any, ...], bytes] | None:
    """Read one frame: its message and blob; None at the end of the stream (the other side ended)."""
    head = stream.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    size, blob_size = _HEADER.unpack(head)
    body = stream.read(size)
    blob = stream.read(blob_size) if blob_size else b""
    if len(body) < size or len(blob) < blob_size:
        return None
    message = _PlainUnpickler(io.BytesIO(body)).load()
    if not isinstance(message, tuple) or not message or not isinstance(message[0], str):
        raise pickle.UnpicklingError("a query_sql frame must be a tuple that starts with its kind")
    return message, blob


def _exit_with_parent(parent: int) -> None:
    """End this process soon after its parent is gone (a statement under way never sees stdin close)."""
    while os.getppid() == parent:
        time.sleep(PARENT_CHECK_S)
    os._exit(0)


def main() -> None:
    """Serve requests from stdin until it closes (or the parent process ends).

    Ctrl-C is ignored: it reaches every process of the terminal's group, and it is the parent's to handle
    (it then closes stdin, or ends, and this process ends with it), not a traceback of this one.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    conn: sqlite3.Connection | None = None
    while (frame := read_frame(source)) is not None:
        request, blob = frame
        kind = request[0]
        if kind == "load":
            if conn is not None:
                conn.close()
            conn = open_copy(blob)
            send_frame(sink, ("loaded",))
        elif kind == "apply" and conn is not None:
            _, statements, changes = request
            send_frame(sink, ("applied",) if apply_writes(conn, statements, changes) else ("diverged",))
        elif kind == "query" and conn is not None:
            _, sql, time_limit_s, max_rows = request
            send_frame(sink, run_query(conn, sql, time_limit_s, max_rows))
        else:
            send_frame(sink, ("error", f"the query process got an unexpected request {kind!r}"))


if __name__ == "__main__":
    main()

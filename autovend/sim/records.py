"""Operating records in SQLite: the agent-visible store the query tool reads, and the hidden evaluation store.

Days are simulation days (day 1 = the world's start date); dates are ISO text 'YYYY-MM-DD'. Money is
CNY as REAL rounded to 2 decimals (the simulator keeps exact fen inside). Prices at which nothing
was ever set are the reference prices of the catalog.

Agent-visible tables (`Simulator.records`):

- devices(device_id, location, site_type, capacity): the machines (static).
- catalog(sku_id, name, category_l1, category_l2, ref_price, unit_cost, shelf_life_days): the
  products (static).
- orders(order_id, placed_day, sku_id, qty, unit_cost, supplier_id, eta_day, arrived_day): one row
  per accepted order item; eta_day is the promised day (placement + nominal lead time); arrived_day
  is NULL until the units land.
- arrivals(day, order_id, sku_id, qty, expiry_day): units landing in the warehouse at the start of
  `day`; expiry_day is the first day on which they are expired (arrival + shelf life).
- shelf_events(day, device_id, sku_id, kind, qty, expired_qty): accepted physical operations; kind is
  restock (warehouse -> shelf), reduce or delist (shelf -> warehouse); expired_qty of the qty moved
  were expired.
- price_changes(day, device_id, sku_id, old_price, new_price): accepted price changes.
- discards(day, sku_id, qty, expired_qty, cost_written_off): warehouse units destroyed;
  cost_written_off is the cost of the unexpired ones among them.
- daily_sales(day, date, device_id, sku_id, units, revenue, cost, expired_units, fine): one row per
  machine, SKU and day with units > 0; cost is the cost of the unexpired units sold; expired_units
  of the units were expired and each drew the fine.
- daily_costs(day, date, kind, amount): one row per day and kind, zeros included; kind is purchase,
  warehouse_rent, daily_fee, visit or expired_fine; amounts are positive outflows of cash.
- visits(day, device_id, n_operations): machines touched on `day` and the accepted operations there.
- daily_summary(day, date, cash, net_assets, units_sold, expired_units_sold, revenue, cogs,
  gross_profit, purchase, warehouse_rent, daily_fee, visit, expired_fine, expiry_writeoff,
  discard_writeoff, net, n_visits, shelf_units, shelf_expired_units, warehouse_units,
  warehouse_expired_units, in_transit_units, shelf_value, warehouse_value, in_transit_value): one
  row per settled day; cash, net_assets, units and values are taken at the close of the day (before
  the next day's rent); net = gross_profit - warehouse_rent - daily_fee - visit - expired_fine -
  expiry_writeoff - discard_writeoff is the day's change in net assets; values are at cost and count
  unexpired units only.

Hidden tables (`Simulator.hidden`, an `autovend.sim.hidden.HiddenLog`, never shown to the agent):

- demand(day, device_id, sku_id, shelf_units, price, rate, demand, sales, lost): every machine, SKU
  and day with a positive expected demand `rate` (shock included); demand is the Poisson draw, sales
  = min(demand, shelf_units), lost = demand - sales.
- shocks(day, device_id, xi): the persistent demand multiplier of each machine-day.
- machine_days(day, device_id, units_before, expired_before, n_skus, free_capacity, empty,
  sold_out, units_sold, revenue, gross_profit, expected_units, lost_units): per machine and day, the
  shelf when demand was realised (all units and the expired ones, products with a unit), free
  capacity, empty (1 if no unit), sold_out (products whose last unit sold that day), sales and their
  gross profit, the expected units and the lost units.
- lead_times(order_id, placed_day, lead_days, arrival_day): the actual lead time of every order.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class Table:
    """A table: name, (column, SQLite type) pairs and the indexes to build (tuples of columns)."""

    name: str
    columns: tuple[tuple[str, str], ...]
    indexes: tuple[tuple[str, ...], ...] = ()

    @property
    def column_names(self) -> tuple[str, ...]:
        """Column names in table order."""
        return tuple(c for c, _ in self.columns)

    def ddl(self) -> list[str]:
        """CREATE statements of the table and its indexes."""
        cols = ", ".join(f"{c} {t}" for c, t in self.columns)
        out = [f"CREATE TABLE {self.name} ({cols})"]
        for i, idx in enumerate(self.indexes):
            out.append(f"CREATE INDEX ix_{self.name}_{i} ON {self.name} ({', '.join(idx)})")
        return out


_I, _R, _T = "INTEGER", "REAL", "TEXT"
INSERT_BLOCK = 64  # rows per multi-row INSERT statement

RECORD_TABLES: tuple[Table, ...] = (
    Table("devices", (("device_id", f"{_T} PRIMARY KEY"), ("location", _T), ("site_type", _T), ("capacity", _I))),
    Table(
        "catalog",
        (
            ("sku_id", f"{_T} PRIMARY KEY"),
            ("name", _T),
            ("category_l1", _T),
            ("category_l2", _T),
            ("ref_price", _R),
            ("unit_cost", _R),
            ("shelf_life_days", _I),
        ),
    ),
    Table(
        "orders",
        (
            ("order_id", f"{_I} PRIMARY KEY"),
            ("placed_day", _I),
            ("sku_id", _T),
            ("qty", _I),
            ("unit_cost", _R),
            ("supplier_id", _T),
            ("eta_day", _I),
            ("arrived_day", _I),
        ),
        (("sku_id",),),
    ),
    Table(
        "arrivals",
        (("day", _I), ("order_id", _I), ("sku_id", _T), ("qty", _I), ("expiry_day", _I)),
        (("day",),),
    ),
    Table(
        "shelf_events",
        (("day", _I), ("device_id", _T), ("sku_id", _T), ("kind", _T), ("qty", _I), ("expired_qty", _I)),
        (("day",),),
    ),
    Table(
        "price_changes",
        (("day", _I), ("device_id", _T), ("sku_id", _T), ("old_price", _R), ("new_price", _R)),
        (("device_id", "sku_id"),),
    ),
    Table(
        "discards",
        (("day", _I), ("sku_id", _T), ("qty", _I), ("expired_qty", _I), ("cost_written_off", _R)),
    ),
    Table(
        "daily_sales",
        (
            ("day", _I),
            ("date", _T),
            ("device_id", _T),
            ("sku_id", _T),
            ("units", _I),
            ("revenue", _R),
            ("cost", _R),
            ("expired_units", _I),
            ("fine", _R),
        ),
        (("day",),),
    ),
    Table("daily_costs", (("day", _I), ("date", _T), ("kind", _T), ("amount", _R)), (("day",),)),
    Table("visits", (("day", _I), ("device_id", _T), ("n_operations", _I)), (("day",),)),
    Table(
        "daily_summary",
        (
            ("day", f"{_I} PRIMARY KEY"),
            ("date", _T),
            ("cash", _R),
            ("net_assets", _R),
            ("units_sold", _I),
            ("expired_units_sold", _I),
            ("revenue", _R),
            ("cogs", _R),
            ("gross_profit", _R),
            ("purchase", _R),
            ("warehouse_rent", _R),
            ("daily_fee", _R),
            ("visit", _R),
            ("expired_fine", _R),
            ("expiry_writeoff", _R),
            ("discard_writeoff", _R),
            ("net", _R),
            ("n_visits", _I),
            ("shelf_units", _I),
            ("shelf_expired_units", _I),
            ("warehouse_units", _I),
            ("warehouse_expired_units", _I),
            ("in_transit_units", _I),
            ("shelf_value", _R),
            ("warehouse_value", _R),
            ("in_transit_value", _R),
        ),
    ),
)


def _insert_sql(table: Table, n_rows: int = 1) -> str:
    """The INSERT statement of `n_rows` rows of a table, all columns in order."""
    row = "(" + ", ".join("?" * len(table.columns)) + ")"
    return f"INSERT INTO {table.name} ({', '.join(table.column_names)}) VALUES " + ", ".join([row] * n_rows)


def _schema_doc() -> str:
    """The module docstring's table list (the documented schema)."""
    doc = __doc__ or ""
    return doc[doc.index("Agent-visible tables") :].rstrip() + "\n"


SCHEMA_DOC: str = _schema_doc()

# Authorizer action codes a read-only query may use: SELECT itself, reading columns, calling
# functions and recursive CTEs. Everything else (writes, PRAGMA, ATTACH, ...) is denied.
_READ_ONLY_ACTIONS = frozenset(
    {
        sqlite3.SQLITE_SELECT,
        sqlite3.SQLITE_READ,
        sqlite3.SQLITE_FUNCTION,
        getattr(sqlite3, "SQLITE_RECURSIVE", 33),
    }
)


def _read_only_authorizer(action: int, *_: Any) -> int:
    return sqlite3.SQLITE_OK if action in _READ_ONLY_ACTIONS else sqlite3.SQLITE_DENY


JOURNAL_MAX_ROWS = 200_000  # parameter rows kept in a journal before it is dropped (see `take_journal`)


Rows = list[Sequence[Any]]


@dataclass(frozen=True, eq=False)
class Columns:
    """Rows of one table given column by column (lists or arrays of equal length), turned into rows when written."""

    columns: tuple[Any, ...]

    def rows(self) -> Rows:
        """The rows, as tuples in the table's column order."""
        cols = [c.tolist() if hasattr(c, "tolist") else c for c in self.columns]
        return list(zip(*cols, strict=True))


Chunk = Rows | Columns


class RecordStore:
    """An in-memory SQLite database with a fixed schema; the simulator writes, callers read.

    Writes are kept in memory, in order, and written to SQLite when something reads the database
    (`connection`, `read_only`, `frame`, `serialize`, `take_journal`, `execute`): an episode that
    nobody queries never pays for its SQL, and one that is queried sees every row written before.
    The statements run then are those the writes would have run at once, in the same order, so
    the database ends byte for byte the same. The connection is created with
    `check_same_thread=False` so a server thread may read it; the store is not safe for concurrent
    use (call it from one thread at a time).
    """

    def __init__(self, tables: Sequence[Table], data: bytes | None = None) -> None:
        self.tables: dict[str, Table] = {t.name: t for t in tables}
        self._pending: dict[str, list[Chunk]] = {}  # the rows of the current write group, by table
        self._ops: list[tuple[str, Any, Any]] = []  # sealed write groups and statements, in order
        self._queued = 0  # rows and statement rows ever queued (see `version`)
        self._own = 0  # changes of the connection made by writing what was queued
        self._sql = {t.name: _insert_sql(t) for t in tables}
        self._block_sql = {t.name: _insert_sql(t, INSERT_BLOCK) for t in tables}
        self._journal: list[tuple[str, list[Sequence[Any]]]] | None = None  # see `take_journal`
        self._journal_rows = 0
        self._conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        if data is None:
            for table in tables:
                for stmt in table.ddl():
                    self._conn.execute(stmt)
        else:
            self._conn.deserialize(data)

    @property
    def connection(self) -> sqlite3.Connection:
        """The raw connection (everything queued written first). Readers should use `read_only()`."""
        self.flush()
        return self._conn

    @property
    def version(self) -> int:
        """A number that grows with every write, queued or written, made through the store or on its connection.

        Reading it writes nothing: it tells whether the records changed without paying for their SQL.
        """
        return self._queued + self._conn.total_changes - self._own

    def insert(self, table: str, rows: Iterable[Sequence[Any]]) -> None:
        """Queue rows (tuples in the table's column order); they are written when the database is read.

        Rows queued between two `seal` calls are written table by table, in the order the tables
        first got a row (as one write group); groups and statements are written in the order queued.
        """
        rows = list(rows)
        self._queued += len(rows)
        chunks = self._pending.get(table)
        if chunks is None:
            self._pending[table] = [rows]
        elif type(chunks[-1]) is list:
            chunks[-1].extend(rows)
        else:
            chunks.append(rows)

    def insert_row(self, table: str, row: Sequence[Any]) -> None:
        """Queue one row (see `insert`)."""
        self._queued += 1
        chunks = self._pending.get(table)
        if chunks is None:
            self._pending[table] = [[row]]
        elif type(chunks[-1]) is list:
            chunks[-1].append(row)
        else:
            chunks.append([row])

    def insert_columns(self, table: str, columns: Sequence[Any]) -> None:
        """Queue rows given column by column (equal-length lists or arrays in the table's column order).

        They stay columns until written: an episode nobody queries never turns them into rows.
        """
        n = len(columns[0])
        if not n:
            return
        self._queued += n
        self._pending.setdefault(table, []).append(Columns(tuple(columns)))

    def seal(self) -> None:
        """End the current write group (the simulator does at the end of every call); nothing is written."""
        if self._pending:
            self._ops.append(("group", self._pending, None))
            self._pending = {}

    def flush(self) -> None:
        """Write everything queued: each write group in one transaction, each statement as queued."""
        self.seal()
        if not self._ops:
            return
        ops, self._ops = self._ops, []
        before = self._conn.total_changes
        try:
            for i, (kind, what, rows) in enumerate(ops):
                if kind == "many":
                    self._conn.executemany(what, rows)
                    self._note(what, rows)
                else:
                    self._write_group(what)
                ops[i] = ("done", None, None)
        except BaseException:
            self._ops = [op for op in ops if op[0] != "done"] + self._ops
            raise
        finally:
            self._own += self._conn.total_changes - before

    def _write_group(self, group: dict[str, list[Chunk]]) -> None:
        """One write group in one transaction."""
        self._conn.execute("BEGIN")
        try:
            for table, chunks in group.items():
                rows: Rows = []
                for chunk in chunks:
                    rows.extend(chunk.rows() if isinstance(chunk, Columns) else chunk)
                self._write(table, rows)
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def _write(self, table: str, rows: list[Sequence[Any]]) -> None:
        """INSERT rows: INSERT_BLOCK rows per statement (nearly twice as fast), the rest one by one."""
        full = len(rows) - len(rows) % INSERT_BLOCK
        if full:
            sql = self._block_sql[table]
            blocks: list[Sequence[Any]] = [
                list(chain.from_iterable(rows[i : i + INSERT_BLOCK])) for i in range(0, full, INSERT_BLOCK)
            ]
            for params in blocks:
                self._conn.execute(sql, params)
            self._note(sql, blocks)
        if full < len(rows):
            rest = rows[full:]
            self._conn.executemany(self._sql[table], rest)
            self._note(self._sql[table], rest)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        """Run one statement (the simulator's writes, e.g. an UPDATE) after flushing."""
        self.flush()
        before = self._conn.total_changes
        cur = self._conn.execute(sql, params)
        self._own += self._conn.total_changes - before
        self._queued += 1
        self._note(sql, [params if isinstance(params, Mapping) else tuple(params)])
        return cur

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """Queue one statement for many parameter rows (e.g. an UPDATE), after the rows queued before it."""
        rows = list(rows)
        self.seal()
        self._queued += len(rows)
        self._ops.append(("many", sql, rows))

    def _note(self, sql: str, rows: list[Sequence[Any]]) -> None:
        """Add a statement run through the store to the journal, if one is kept (dropped when it grows too long)."""
        if self._journal is None:
            return
        self._journal_rows += len(rows)
        if self._journal_rows > JOURNAL_MAX_ROWS:
            self._journal = None
        else:
            self._journal.append((sql, rows))

    def take_journal(self) -> list[tuple[str, list[Sequence[Any]]]] | None:
        """The statements written through the store since the last call, and start a new journal.

        Replaying them, in order, on a copy of the database as it was at the last call makes the copy
        equal to the store again (the query sandbox keeps its copy current this way instead of sending
        the whole database). None when no journal was kept (the first call) or it outgrew
        `JOURNAL_MAX_ROWS`: then copy the whole database (`serialize`). Writes made on the raw
        `connection` bypass the journal; a replaying copy can catch them by comparing
        `connection.total_changes` before and after.
        """
        self.flush()
        out, self._journal, self._journal_rows = self._journal, [], 0
        return out

    @contextmanager
    def read_only(self) -> Iterator[sqlite3.Connection]:
        """The connection with writes, PRAGMA and ATTACH denied, for running untrusted SELECTs.

        Inside the block only SELECT statements (with functions and recursive CTEs) are authorised;
        anything else fails with `sqlite3.DatabaseError` ("not authorized"). Time limits and row
        caps are the caller's (e.g. `connection.set_progress_handler`).
        """
        self.flush()
        self._conn.execute("PRAGMA query_only = ON")
        self._conn.set_authorizer(_read_only_authorizer)
        try:
            yield self._conn
        finally:
            self._conn.set_authorizer(None)
            self._conn.execute("PRAGMA query_only = OFF")

    def frame(self, table_or_sql: str, params: Sequence[Any] = ()) -> pd.DataFrame:
        """A whole table (by name) or the result of a SELECT, as a DataFrame."""
        sql = f"SELECT * FROM {table_or_sql}" if table_or_sql in self.tables else table_or_sql
        with self.read_only() as conn:
            cur = conn.execute(sql, params)
            cols = [d[0] for d in cur.description]
            return pd.DataFrame(cur.fetchall(), columns=cols)

    def serialize(self) -> bytes:
        """The whole database as bytes (for checkpoints)."""
        self.flush()
        return self._conn.serialize()

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

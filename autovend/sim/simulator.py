"""The simulator: one run of the benchmark on a frozen world, as a library object without I/O.

Life cycle (gymnasium-like)::

    sim = Simulator(world, seed=1)          # = reset(seed=1): day 1 has started (world: a World or a bundle path)
    sim.place_order([{"sku_id": "SKU0001", "qty": 40}])
    report = sim.end_day()                  # demand, sales, fines, visits; day 2 starts
    ...                                     # after day `horizon` is ended, sim.done is True

A day: start (due orders land in the warehouse, batches reaching their expiry day turn expired and
their cost is written off, warehouse rent is charged on every unit held and the fixed fee on every
machine) -> the action window (the mutating methods and the read-only accessors) -> `end_day()`
(demand is realised on the shelves and prices then in force, sales take the earliest-expiring units,
expired units sold draw the fine, touched machines pay one visit each, the day's records are
written) -> the next day starts. Money is exact integer fen inside; accessors give CNY.

`Simulator` is a facade over parts that share one `SimState`: `Actions` (the mutating methods),
`Settlement` (the start and close of a day), `Accounts` (ledger, cash, stock value), `Recorder`
(the agent-visible records and the hidden log) and `Queries` (the read-only accessors).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from autovend.rng import run_seed
from autovend.sim import checkpoint
from autovend.sim.accounting import Accounts
from autovend.sim.actions import Actions
from autovend.sim.days import WEEKDAYS
from autovend.sim.facts import IntArray, WorldFacts
from autovend.sim.hidden import HiddenLog
from autovend.sim.money import from_fen
from autovend.sim.queries import Queries
from autovend.sim.recorder import Recorder
from autovend.sim.records import RECORD_TABLES, RecordStore
from autovend.sim.results import Balance, BatchResult, DayInfo, DayReport, DayStart
from autovend.sim.sales import DayDraw, sample_draws
from autovend.sim.saleslog import FloatArray
from autovend.sim.settlement import Settlement
from autovend.sim.state import SimState, Snapshot, initial_state
from autovend.world.model import World


class Simulator:
    """A run of the AutoVend benchmark on `world`; see the module docstring for the day cycle.

    Mutating methods take a list of item dicts and return a `BatchResult`; items are checked one by
    one, in order, against the state left by the items before; a rejected item changes nothing and
    triggers no visit. After the last day is ended every mutating call raises `EpisodeOver`.
    Read-only accessors return plain Python values or DataFrames in CNY; arrays are in world order
    (machines as in `world.machines`, products as in `world.catalog`).
    """

    records: RecordStore
    hidden: HiddenLog

    def __init__(self, world: World | str | os.PathLike[str], *, seed: int = 0) -> None:
        """A run on `world` (a `World`, or the path of a world bundle folder) started at day 1 with `seed`."""
        if not isinstance(world, World):
            from autovend.world.bundle import as_world  # the bundle reader is only needed for paths

            world = as_world(world)
        self._setup(world)
        self.reset(seed=seed)

    def _setup(self, world: World) -> None:
        """Everything fixed by the world: ids, indexes, prices and costs in fen, fees, day tables."""
        f = self._facts = WorldFacts.from_world(world)
        self.world = world
        self.n_machines = f.n_machines
        self.n_products = f.n_products
        self.horizon_days = f.horizon_days
        self.device_ids = f.device_ids
        self.sku_ids = f.sku_ids
        self.capacity = f.capacity
        self.ref_fen = f.ref_fen
        self.cost_fen = f.cost_fen
        self.shelf_life = f.shelf_life
        self.price_lo_fen = f.price_lo_fen
        self.price_hi_fen = f.price_hi_fen
        self.start_cash_fen = f.start_cash_fen
        self.rent_fen_per_unit = f.rent_fen_per_unit
        self.daily_fee_fen = f.daily_fee_fen
        self.visit_fen = f.visit_fen
        self.fine_fen = f.fine_fen

    def _wire(self, state: SimState, records: RecordStore, hidden: HiddenLog, *, restored: bool = False) -> None:
        """Put the parts of the run together over `state` and the two record stores (`restored`: from a snapshot)."""
        f = self._facts
        self._state = state
        self.records = records
        self.hidden = hidden
        self._accounts = Accounts(f, state)
        self._recorder = Recorder(f, records, hidden, restored=restored)
        self._settlement = Settlement(f, state, self._accounts, self._recorder)
        self._actions = Actions(f, state, self._accounts, self._recorder)
        self._queries = Queries(f, state)

    # ------------------------------------------------------------------ life cycle

    def reset(self, *, seed: int | None = None) -> DayStart:
        """Start a new run at day 1 (day-1 rent and fee charged) and return the start of day 1.

        `seed` defaults to the seed of the current run. Records of the previous run are dropped.
        """
        if seed is None:
            seed = self._state.seed if hasattr(self, "_state") else 0
        seed = run_seed(seed)
        if hasattr(self, "records"):
            self.records.close()
        self._wire(initial_state(self._facts, seed), RecordStore(RECORD_TABLES), HiddenLog())
        self._recorder.static()
        self._settlement.start_day(1)
        return self.day_start

    def snapshot(self) -> Snapshot:
        """The whole run as it stands: state, agent-visible database (bytes) and hidden log.

        The state and hidden log are this simulator's own objects (see `Snapshot`): save or copy the
        snapshot before the run moves on.
        """
        return Snapshot(state=self._state, records=self.records.serialize(), hidden=self.hidden)

    @classmethod
    def restore(cls, world: World, snapshot: Snapshot) -> Simulator:
        """A simulator continuing the run of `snapshot` (taken on `world`); it takes the snapshot's state over."""
        sim = cls.__new__(cls)
        sim._setup(world)
        sim._wire(snapshot.state, RecordStore(RECORD_TABLES, data=snapshot.records), snapshot.hidden, restored=True)
        return sim

    def save(self, path: str | Path) -> Path:
        """Write the whole run (state and both databases) to `path`; see `autovend.sim.checkpoint`."""
        return checkpoint.save(self.snapshot(), self.world, path)

    @classmethod
    def load(cls, path: str | Path, world: World) -> Simulator:
        """Restore a run saved by `save`; `world` must be the world it was made with."""
        return cls.restore(world, checkpoint.load(path, world))

    # ------------------------------------------------------------------ remote actions

    def place_order(self, items: Sequence[Any]) -> BatchResult:
        """Order warehouse stock: items {sku_id, qty, supplier_id?}; cash is debited at once.

        Each accepted item is one order with its own id; it lands at the start of placement day +
        its lead time (drawn per order from `Economics.lead_time_pmf`; promised: the nominal lead).
        """
        return self._actions.place_order(items)

    def adjust_price(self, items: Sequence[Any]) -> BatchResult:
        """Set prices per machine and SKU: items {device_id, sku_id, price}; the SKU need not be stocked.

        The price (CNY) is rounded half-up to the fen, then must lie within the band (inclusive) on the
        reference price. Setting the price in force is accepted and changes nothing.
        """
        return self._actions.adjust_price(items)

    def discard(self, items: Sequence[Any]) -> BatchResult:
        """Destroy warehouse units: items {sku_id, qty}, earliest-expiring first.

        Expired units go at no loss (their cost was written off when they expired); unexpired units
        are an early-disposal loss at cost.
        """
        return self._actions.discard(items)

    # ------------------------------------------------------------------ physical actions

    def restock(self, items: Sequence[Any]) -> BatchResult:
        """Move warehouse units onto a shelf: items {device_id, sku_id, qty}; working days only.

        Takes the earliest-expiring warehouse units (expired included; they stay expired on the
        shelf, see `expired_qty` in the result). Limited by warehouse stock and shelf capacity.
        """
        return self._actions.restock(items)

    def reduce(self, items: Sequence[Any]) -> BatchResult:
        """Return shelf units to the warehouse: items {device_id, sku_id, qty}, earliest-expiring first."""
        return self._actions.reduce(items)

    def delist(self, items: Sequence[Any]) -> BatchResult:
        """Return all shelf units of a product to the warehouse: items {device_id, sku_id}."""
        return self._actions.delist(items)

    # ------------------------------------------------------------------ settlement

    def end_day(self) -> DayReport:
        """Close the action window: realise demand, settle the day, start the next one (if any).

        Returns the day's `DayReport`; its `next_day` is the start of the following day, or None
        after the last day (then `done` is True and every further action raises `EpisodeOver`).
        """
        return self._settlement.end_day()

    def draw_demand(self) -> DayDraw:
        """Today's expected demand and uniforms on the shelves and prices as they stand, for `end_day`.

        Vector environments draw many simulators' days, sample them in one pass (`sample_draws`) and
        then end each day: `end_day` uses the draw if nothing changed since, else draws again. Either
        way the day ends exactly as without it.
        """
        return self._settlement.draw()

    @staticmethod
    def sample_draws(draws: Sequence[DayDraw]) -> None:
        """Sample the demand of many simulators' draws (`draw_demand`) in one pass, as each would alone."""
        sample_draws(draws)

    # ------------------------------------------------------------------ accessors: time

    @property
    def seed(self) -> int:
        """The seed of this run."""
        return self._state.seed

    @property
    def day(self) -> int:
        """Current simulation day, 1..horizon (stays at the horizon once the episode is over)."""
        return self._state.day

    @property
    def date(self) -> dt.date:
        """Calendar date of the current day."""
        return self.world.date_of(self._state.day)

    @property
    def weekday(self) -> str:
        """English weekday name of the current day."""
        return WEEKDAYS[self.date.weekday()]

    @property
    def is_workday(self) -> bool:
        """True when physical actions are possible today."""
        return self._facts.days.is_workday(self._state.day)

    @property
    def done(self) -> bool:
        """True once the last day has been ended."""
        return self._state.done

    @property
    def today(self) -> DayInfo:
        """Calendar facts of the current day."""
        return self.day_info(self._state.day)

    def next_workday(self, day: int | None = None) -> int:
        """The first working day after `day` (default today), as a day number; 0 if the calendar has none."""
        return self._facts.days.next_workday(self._state.day if day is None else day)

    def day_info(self, day: int) -> DayInfo:
        """Calendar facts of any day covered by the world's calendar (days may exceed the horizon)."""
        return self._facts.days.info(day)

    @property
    def day_start(self) -> DayStart:
        """What happened at the start of the current day (arrivals, expiry, rent, fee, delayed orders)."""
        assert self._state.day_start is not None
        return self._state.day_start

    @property
    def reports(self) -> tuple[DayReport, ...]:
        """Reports of every settled day, in order."""
        return tuple(self._state.reports)

    # ------------------------------------------------------------------ accessors: money

    @property
    def cash_fen(self) -> int:
        """Cash in fen (exact)."""
        return self._state.cash_fen

    @property
    def cash(self) -> float:
        """Cash in CNY (may be negative)."""
        return from_fen(self._state.cash_fen)

    def balance(self) -> Balance:
        """Cash, shelf, warehouse and in-transit value at cost (unexpired units only), and net assets."""
        return self._accounts.balance()

    @property
    def net_assets(self) -> float:
        """Eq. (1) in CNY: cash + cost of unexpired units on shelves, in the warehouse and in transit."""
        return self.balance().net_assets

    def ledger(self) -> pd.DataFrame:
        """Every money movement: day, account (cash | inventory), kind, amount (CNY), amount_fen, ref.

        cash = start cash + sum of the cash rows; inventory at cost = sum of the inventory rows
        (purchase in; cogs, expiry and discard write-offs out); net assets = start cash + sum of all.
        """
        return self._accounts.ledger()

    def ledger_totals_fen(self) -> dict[str, int]:
        """Sum of the ledger by account (fen): {'cash': ..., 'inventory': ...}."""
        return self._accounts.totals_fen()

    # ------------------------------------------------------------------ accessors: stock

    def devices(self) -> pd.DataFrame:
        """One row per machine with its shelf totals and visits.

        Columns: device_id, location, site_type, capacity, units_on_shelf, n_skus, free_capacity,
        expired_units, expiring_7d_units, days_since_visit (<NA> if never visited), visited_today.
        """
        return self._queries.devices()

    def shelf(self, device_id: str | None = None) -> pd.DataFrame:
        """Products on the shelves of one machine or all (rows with units > 0).

        Columns: device_id, sku_id, units, expired_units, expiring_7d_units, price, ref_price.
        Raises KeyError for an unknown device_id.
        """
        return self._queries.shelf(device_id)

    def warehouse(self) -> pd.DataFrame:
        """Warehouse stock by SKU (rows with units > 0).

        Columns: sku_id, units, expired_units, expiring_7d_units, unit_cost, value_at_cost (of the
        unexpired units only).
        """
        return self._queries.warehouse()

    def warehouse_batches(self) -> pd.DataFrame:
        """Warehouse batches: sku_id, qty, arrival_day, expiry_day (first expired day), expired (today)."""
        return self._queries.warehouse_batches()

    def shelf_batches(self, device_id: str | None = None) -> pd.DataFrame:
        """Shelf batches: device_id, sku_id, qty, arrival_day, expiry_day, expired (today)."""
        return self._queries.shelf_batches(device_id)

    def batch_arrays(self) -> dict[str, IntArray]:
        """Shelf and warehouse batches as flat arrays (no DataFrame; for fast read-only views).

        shelf_machine, shelf_product, shelf_qty, shelf_expiry: one entry per shelf batch (machine and
        product indexes in world order); wh_product, wh_qty, wh_expiry: one per warehouse batch.
        Expiry days are as in `shelf_batches` (the first day on which the units are expired).
        """
        return self._queries.batch_arrays()

    def shelf_batch_arrays(self) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        """The shelf part of `batch_arrays`: machine, product, qty, expiry day (one entry per shelf batch)."""
        return self._queries.shelf_batch_arrays()

    def machine_batch_arrays(self, m: int) -> tuple[IntArray, IntArray, IntArray]:
        """Shelf batches of machine m (world order) as flat arrays: product, qty, expiry day."""
        return self._queries.machine_batch_arrays(m)

    def warehouse_batch_arrays(self) -> tuple[IntArray, IntArray, IntArray]:
        """Warehouse batches as flat arrays: product, qty, expiry day (one entry per batch)."""
        return self._queries.warehouse_batch_arrays()

    def in_transit(self) -> pd.DataFrame:
        """Orders not yet arrived; the actual arrival day stays hidden.

        Columns: order_id, sku_id, qty, unit_cost, value_at_cost, placed_day, eta_day (promised),
        delayed (past the promised day and not arrived).
        """
        return self._queries.in_transit()

    def in_transit_rows(self) -> list[tuple[int, str, int, float, float, int, int, bool]]:
        """The rows of `in_transit` as tuples in its column order (no DataFrame), by order id."""
        return self._queries.in_transit_rows()

    def last_visit_days(self) -> IntArray:
        """(M,) the last day each machine was visited (today for one touched today), 0 if never (a copy)."""
        return self._state.last_visit.copy()

    def visits_today(self) -> dict[str, int]:
        """Machines touched today and their accepted operations (each pays one visit at end of day)."""
        return self._queries.visits_today()

    def price(self, device_id: str, sku_id: str) -> float:
        """Price in force (CNY) of a product at a machine. Raises KeyError for unknown ids."""
        return self._queries.price(device_id, sku_id)

    def prices(self, device_id: str | None = None, *, changed_only: bool = False) -> pd.DataFrame:
        """Prices in force, for one machine or all: device_id, sku_id, price, ref_price.

        Every product, or with `changed_only` only those set away from the reference price. Raises
        KeyError for an unknown device_id.
        """
        return self._queries.prices(device_id, changed_only=changed_only)

    def price_band(self, sku_id: str) -> tuple[float, float]:
        """Lowest and highest allowed price (CNY, inclusive) of a product."""
        return self._queries.price_band(sku_id)

    # ------------------------------------------------------------------ accessors: arrays (world order)

    def device_index(self, device_id: str) -> int:
        """Row of a machine in world order. Raises KeyError for an unknown device_id."""
        return self._facts.device_index[device_id]

    def sku_index(self, sku_id: str) -> int:
        """Column of a product in catalog order. Raises KeyError for an unknown sku_id."""
        return self._facts.sku_index[sku_id]

    def shelf_units(self) -> IntArray:
        """(M, K) units on shelves, expired included (a copy)."""
        return self._queries.shelf_units()

    def price_matrix_fen(self) -> IntArray:
        """(M, K) prices in force in fen (a copy)."""
        return self._queries.price_matrix_fen()

    def warehouse_units(self) -> IntArray:
        """(K,) units in the warehouse, expired included (a copy)."""
        return self._queries.warehouse_units()

    def in_transit_units(self) -> IntArray:
        """(K,) units ordered and not yet arrived (a copy)."""
        return self._queries.in_transit_units()

    def expired_by(self, day: int | None = None) -> tuple[IntArray, IntArray]:
        """Units that are expired on `day` (default today; expiry_day <= day): shelves (M, K), warehouse (K,).

        With a future day this tells what will have expired by then if nothing moves.
        """
        return self._queries.expired_by(day)

    def sales_of_day(self, day: int) -> tuple[IntArray, IntArray, IntArray, FloatArray, FloatArray]:
        """The `daily_sales` records of day `day` as arrays, in record order (no SQL; empty for a day not settled).

        machine and product indexes (world order), units, revenue and cost (CNY, as in the records).
        """
        return self._recorder.sales.day(day)

    def units_sold_by_product(self, first: int, last: int) -> IntArray:
        """(K,) units sold of each product on the settled days `first`..`last` (the `daily_sales` sums, no SQL)."""
        return self._recorder.sales.units_by_product(first, last)

    def unit_flows(self) -> dict[str, IntArray]:
        """(K,) unit counts: ordered, in_transit, warehouse, shelves, sold, discarded.

        Conservation: ordered == in_transit + warehouse + shelves + sold + discarded, per product.
        """
        return self._queries.unit_flows()

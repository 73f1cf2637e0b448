"""Read-side views of a running simulator for the tools: catalog index, sales book, stock snapshot.

The tools answer many read-only questions per day; these views keep them cheap. `CatalogIndex` is
built once per world; `SalesBook` holds the settled per-machine, per-product sales (read from the
agent-visible `daily_sales` records, one query per new day); `StockView` is a snapshot of shelves,
prices and the warehouse, rebuilt only when the simulator's state changes (the day moves or a
record is written, see `state_version`). `Views.answer` keeps the answers of the read-only tools for
the same state: a question asked again before anything changed gets the same result without running
its handler again.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd

from autovend.sim import Simulator
from autovend.sim.queries import EXPIRING_WITHIN_DAYS
from autovend.tools.calendar_weather import CalendarIndex, WeatherIndex
from autovend.world.model import World

T = TypeVar("T")
IntArray = npt.NDArray[np.int64]
ANSWERS_KEPT = 256  # answers of one state kept by `Views.answer` (the oldest goes first)
FloatArray = npt.NDArray[np.float64]


def table(columns: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    """The compact table form used in observations and results: {"columns": [...], "rows": [[...], ...]}."""
    return {"columns": columns, "rows": rows}


def money(x: float) -> float:
    """A CNY amount rounded to the fen for display."""
    return round(float(x), 2)


def round2(x: npt.ArrayLike) -> list[float]:
    """An array of amounts rounded to 2 decimals, as a list of Python floats."""
    rounded: list[float] = np.round(np.asarray(x, dtype=np.float64), 2).tolist()
    return rounded


def rows_of(*columns: list[Any]) -> list[list[Any]]:
    """Table rows from equally long column lists."""
    return [list(r) for r in zip(*columns, strict=True)]


def state_version(sim: Simulator) -> tuple[int, int, bool, int]:
    """Changes whenever anything an agent can observe may have changed.

    Every state change of the simulator writes agent-visible records (orders, shelf events, price
    changes, discards, the day's settlement), so the record store's write counter (`RecordStore.version`,
    read without writing the queued rows) and the day identify the state.
    """
    return (id(sim.records), sim.day, sim.done, sim.records.version)


# ------------------------------------------------------------------------------------------------ catalog


@dataclass(frozen=True, eq=False)
class CatalogIndex:
    """Catalog columns as arrays (catalog order) and the category table, built once per world."""

    sku_ids: tuple[str, ...]
    sku_arr: npt.NDArray[np.object_]
    names: npt.NDArray[np.object_]
    search_text: npt.NDArray[np.object_]  # lower-case "sku_id name"
    category_l1: npt.NDArray[np.object_]
    category_l2: npt.NDArray[np.object_]
    ref_price: FloatArray
    ref_fen: IntArray  # reference price in fen
    unit_cost: FloatArray
    ref_margin: FloatArray  # (ref - cost) / ref
    shelf_life: IntArray
    categories: pd.DataFrame  # category_l1, category_l2, n_skus, ref_price_min, ref_price_max, median_margin

    @classmethod
    def from_world(cls, world: World) -> CatalogIndex:
        """Index the world's catalog."""
        cat = world.catalog
        sku = cat["sku_id"].astype(str).to_numpy(dtype=object)
        names = cat["name"].astype(str).to_numpy(dtype=object)
        ref = cat["ref_price"].to_numpy(dtype=float)
        cost = cat["unit_cost"].to_numpy(dtype=float)
        margin = np.round((ref - cost) / ref, 4)
        l1 = cat["category_l1"].astype(str).to_numpy(dtype=object)
        l2 = cat["category_l2"].astype(str).to_numpy(dtype=object)
        frame = pd.DataFrame({"category_l1": l1, "category_l2": l2, "ref_price": ref, "margin": margin})
        cats = (
            frame.groupby(["category_l1", "category_l2"], sort=True)
            .agg(
                n_skus=("ref_price", "size"),
                ref_price_min=("ref_price", "min"),
                ref_price_max=("ref_price", "max"),
                median_margin=("margin", "median"),
            )
            .reset_index()
        )
        return cls(
            sku_ids=tuple(sku),
            sku_arr=sku,
            names=names,
            search_text=np.array([f"{s} {n}".lower() for s, n in zip(sku, names, strict=True)], dtype=object),
            category_l1=l1,
            category_l2=l2,
            ref_price=ref,
            ref_fen=np.rint(ref * 100).astype(np.int64),
            unit_cost=cost,
            ref_margin=margin,
            shelf_life=cat["shelf_life_days"].to_numpy().astype(np.int64),
            categories=cats,
        )


# ------------------------------------------------------------------------------------------------ sales


@dataclass(frozen=True, eq=False)
class SalesWindow:
    """Sales rows of the settled days `first`..`last` (COO form: one entry per machine, product and day)."""

    first: int
    last: int
    day: IntArray
    machine: IntArray
    product: IntArray
    units: IntArray
    revenue: FloatArray
    cost: FloatArray

    @property
    def n_days(self) -> int:
        """Settled days covered (0 before the first day is settled)."""
        return max(0, self.last - self.first + 1)

    def of_machine(self, m: int) -> SalesWindow:
        """Only the rows of machine `m`."""
        return self._where(self.machine == m)

    def of_product(self, k: int) -> SalesWindow:
        """Only the rows of product `k`."""
        return self._where(self.product == k)

    def _where(self, mask: npt.NDArray[np.bool_]) -> SalesWindow:
        return SalesWindow(
            self.first,
            self.last,
            self.day[mask],
            self.machine[mask],
            self.product[mask],
            self.units[mask],
            self.revenue[mask],
            self.cost[mask],
        )


@dataclass(eq=False)
class SalesBook:
    """Settled sales by day, machine and product, synced lazily from the `daily_sales` records."""

    sim: Simulator
    _days: list[tuple[IntArray, IntArray, IntArray, FloatArray, FloatArray]] = field(default_factory=list)
    _cache: dict[tuple[int, int], SalesWindow] = field(default_factory=dict)

    def settled(self) -> int:
        """The last settled day (0 on day 1)."""
        return self.sim.day if self.sim.done else self.sim.day - 1

    def _sync(self) -> None:
        last = self.settled()
        have = len(self._days)
        if last <= have:
            return
        of_day = getattr(self.sim, "sales_of_day", None)
        if of_day is not None:  # the daily_sales rows of each day from the simulator's sales log, without SQL
            for d in range(have + 1, last + 1):
                self._days.append(of_day(d))
        else:
            self._sync_records(have, last)
        self._cache.clear()

    def _sync_records(self, have: int, last: int) -> None:
        """Days `have`+1..`last` read from the `daily_sales` records (a simulator-like object without a sales log)."""
        rows = self.sim.records.connection.execute(
            "SELECT day, device_id, sku_id, units, revenue, cost FROM daily_sales "
            "WHERE day > ? AND day <= ? ORDER BY day",
            (have, last),
        ).fetchall()
        dev, sku = self._indexes
        days, devices, skus, units, revenue, cost = zip(*rows, strict=True) if rows else ((),) * 6
        day = np.array(days, dtype=np.int64)
        cols = (
            np.array([dev[d] for d in devices], dtype=np.int64),
            np.array([sku[s] for s in skus], dtype=np.int64),
            np.array(units, dtype=np.int64),
            np.array(revenue, dtype=np.float64),
            np.array(cost, dtype=np.float64),
        )
        # rows come by day: each day's rows are one slice (in the order read), empty for a day without sales
        bounds = np.searchsorted(day, np.arange(have + 1, last + 2)).tolist()
        for lo, hi in itertools.pairwise(bounds):
            self._days.append(tuple(c[lo:hi].copy() for c in cols))  # type: ignore[arg-type]

    @cached_property
    def _indexes(self) -> tuple[dict[str, int], dict[str, int]]:
        """Machine and product ids -> their indexes in world order."""
        return (
            {d: i for i, d in enumerate(self.sim.device_ids)},
            {s: i for i, s in enumerate(self.sim.sku_ids)},
        )

    def window(self, n_days: int) -> SalesWindow:
        """Sales of the last `n_days` settled days (fewer near the start of the run)."""
        self._sync()
        last = self.settled()
        first = max(1, last - n_days + 1)
        key = (first, last)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        parts = self._days[first - 1 : last]
        if parts:
            day = np.concatenate([np.full(len(p[0]), first + i, dtype=np.int64) for i, p in enumerate(parts)])
            cols = [np.concatenate([p[j] for p in parts]) for j in range(5)]
        else:
            day = np.zeros(0, dtype=np.int64)
            cols = [np.zeros(0, dtype=np.int64)] * 3 + [np.zeros(0, dtype=np.float64)] * 2
        win = SalesWindow(first, last, day, cols[0], cols[1], cols[2], cols[3], cols[4])
        self._cache[key] = win
        return win


# ------------------------------------------------------------------------------------------------ stock


class StockView:
    """Shelves, prices and warehouse of one simulator state, as arrays in world order.

    expired: units already expired today; expiring: unexpired units that expire within 7 days;
    next_expiry: the earliest expiry day (first day on which they are expired) among the unexpired
    units, 0 where there are none.

    Each part is taken from the simulator when first read and kept: a tool that reads one machine's
    shelf walks only that machine's batches. The view is valid for the state it was made in (`Views`
    hands out a new one when the state changes), so the parts read later are of that same state.
    """

    def __init__(self, sim: Simulator) -> None:
        """A view of `sim`'s current state (nothing is read yet)."""
        self.sim = sim
        self.day = sim.day
        self._machines: dict[int, tuple[IntArray, IntArray, IntArray]] = {}

    @classmethod
    def from_sim(cls, sim: Simulator) -> StockView:
        """The view of `sim`'s current state."""
        return cls(sim)

    @cached_property
    def shelf_units(self) -> IntArray:
        """(M, K) units on shelves, expired included."""
        return self.sim.shelf_units()

    @cached_property
    def price_fen(self) -> IntArray:
        """(M, K) prices in force in fen."""
        return self.sim.price_matrix_fen()

    @cached_property
    def wh_units(self) -> IntArray:
        """(K,) units in the warehouse, expired included."""
        return self.sim.warehouse_units()

    @cached_property
    def transit_units(self) -> IntArray:
        """(K,) units ordered and not yet arrived."""
        return self.sim.in_transit_units()

    def machine_expiry(self, m: int) -> tuple[IntArray, IntArray, IntArray]:
        """(K,) expired, expiring and next-expiry arrays of machine m's shelf."""
        got = self._machines.get(m)
        if got is None and "_shelf" in self.__dict__:  # every shelf is already taken
            got = self._machines[m] = (self._shelf[0][m], self._shelf[1][m], self._shelf[2][m])
        if got is None:
            k, q, e = self.sim.machine_batch_arrays(m)
            got = self._machines[m] = _expiry_arrays(k, q, e, self.day, self.sim.n_products)
        return got

    @cached_property
    def _shelf(self) -> tuple[IntArray, IntArray, IntArray]:
        """(M, K) expired, expiring and next-expiry arrays of every shelf, from one pass over all batches."""
        M, K = self.sim.n_machines, self.sim.n_products
        m, k, q, e = self.sim.shelf_batch_arrays()
        parts = _expiry_arrays(m * K + k, q, e, self.day, M * K)
        return tuple(a.reshape(M, K) for a in parts)  # type: ignore[return-value]

    @property
    def shelf_expired(self) -> IntArray:
        """(M, K) units on shelves already expired today."""
        return self._shelf[0]

    @property
    def shelf_expiring(self) -> IntArray:
        """(M, K) unexpired units on shelves that expire within 7 days."""
        return self._shelf[1]

    @property
    def shelf_next_expiry(self) -> IntArray:
        """(M, K) earliest expiry day of the unexpired units on shelves (0: none)."""
        return self._shelf[2]

    @cached_property
    def _warehouse(self) -> tuple[IntArray, IntArray, IntArray]:
        k, q, e = self.sim.warehouse_batch_arrays()
        return _expiry_arrays(k, q, e, self.day, self.sim.n_products)

    @property
    def wh_expired(self) -> IntArray:
        """(K,) units in the warehouse already expired today."""
        return self._warehouse[0]

    @property
    def wh_expiring(self) -> IntArray:
        """(K,) unexpired units in the warehouse that expire within 7 days."""
        return self._warehouse[1]

    @property
    def wh_next_expiry(self) -> IntArray:
        """(K,) earliest expiry day of the unexpired units in the warehouse (0: none)."""
        return self._warehouse[2]


def _expiry_arrays(
    slot: IntArray, qty: IntArray, expiry: IntArray, day: int, size: int
) -> tuple[IntArray, IntArray, IntArray]:
    """Expired units, units expiring within 7 days and the next expiry day per slot (flat index)."""
    expired = np.zeros(size, dtype=np.int64)
    old = expiry <= day
    np.add.at(expired, slot[old], qty[old])
    soon = (expiry > day) & (expiry <= day + EXPIRING_WITHIN_DAYS)
    expiring = np.zeros(size, dtype=np.int64)
    np.add.at(expiring, slot[soon], qty[soon])
    big = np.iinfo(np.int64).max
    nxt = np.full(size, big, dtype=np.int64)
    fresh = expiry > day
    np.minimum.at(nxt, slot[fresh], expiry[fresh])
    nxt[nxt == big] = 0
    return expired, expiring, nxt


@dataclass(eq=False)
class Views:
    """The views of one session: catalog index, sales book, and the state-versioned snapshots."""

    sim: Simulator
    sales: SalesBook
    locations: tuple[str, ...]
    site_types: tuple[str, ...]
    _version: tuple[int, int, bool, int] | None = None
    _stock: StockView | None = None
    _since: list[int | None] | None = None
    _answers: dict[tuple[str, str], Any] = field(default_factory=dict)

    @classmethod
    def of(cls, sim: Simulator) -> Views:
        """Views of `sim`."""
        world = sim.world
        return cls(
            sim=sim,
            sales=SalesBook(sim),
            locations=tuple(world.machines["location"].astype(str)),
            site_types=tuple(world.machines["site_type"].astype(str)),
        )

    # the world's indexes, each built on first use (a session's first call needs one of them at most)

    @cached_property
    def catalog(self) -> CatalogIndex:
        """The catalog index of the world."""
        return CatalogIndex.from_world(self.sim.world)

    @cached_property
    def calendar(self) -> CalendarIndex:
        """The special days of the world's calendar."""
        return CalendarIndex.from_world(self.sim.world)

    @cached_property
    def weather(self) -> WeatherIndex:
        """The world's settlement weather and forecasts by day."""
        return WeatherIndex.from_world(self.sim.world)

    def _check(self) -> None:
        version = state_version(self.sim)
        if version != self._version:
            self._version = version
            self._stock = None
            self._since = None
            self._answers.clear()

    def stock(self) -> StockView:
        """The stock snapshot of the current state."""
        self._check()
        if self._stock is None:
            self._stock = StockView.from_sim(self.sim)
        return self._stock

    def answer(self, key: tuple[str, str], compute: Callable[[], T]) -> T:
        """The answer kept for `key` (a tool and its canonical arguments) in the current state, else `compute()`.

        Only for questions whose answer is a function of the key and the simulator's observable state
        (`state_version`): any change of that state drops every kept answer. An exception from
        `compute` is not kept. The answer is shared between callers: treat it as read-only.
        """
        self._check()
        if key in self._answers:
            return self._answers[key]  # type: ignore[no-any-return]
        version = self._version
        value = compute()
        if state_version(self.sim) != version:  # a read never changes the state; if one did, keep nothing
            return value
        if len(self._answers) >= ANSWERS_KEPT:
            del self._answers[next(iter(self._answers))]
        self._answers[key] = value
        return value

    def is_kept(self, key: tuple[str, str]) -> bool:
        """True if `answer(key, ...)` would return a kept answer now (without computing)."""
        self._check()
        return key in self._answers

    def days_since_visit(self) -> list[int | None]:
        """Days since each machine's last visit (0 = today, None = never), in world order.

        A machine touched today was visited today; otherwise its last visit is the latest day of
        its rows in the `visits` records (the simulator's `last_visit_days`, read without SQL).
        """
        self._check()
        if self._since is None:
            sim = self.sim
            last = sim.last_visit_days()  # the latest day in the visits records, or today for a machine touched today
            self._since = [None if v == 0 else sim.day - v for v in last.tolist()]
        return self._since

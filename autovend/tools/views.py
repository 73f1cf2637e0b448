"""Read-side views of a running simulator for the tools: catalog index, sales book, stock snapshot.

The tools answer many read-only questions per day; these views keep them cheap. `CatalogIndex` is
built once per world; `SalesBook` holds the settled per-machine, per-product sales (read from the
agent-visible `daily_sales` records, one query per new day); `StockView` is a snapshot of shelves,
prices and the warehouse, rebuilt only when the simulator's state changes (the day moves or a
record is written, see `state_version`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from autovend.sim import Simulator
from autovend.sim.queries import EXPIRING_WITHIN_DAYS
from autovend.world.model import World

IntArray = npt.NDArray[np.int64]
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
    changes, discards, the day's settlement), so the record store's change counter and the day
    identify the state.
    """
    return (id(sim.records), sim.day, sim.done, sim.records.connection.total_changes)


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
        rows = self.sim.records.connection.execute(
            "SELECT day, device_id, sku_id, units, revenue, cost FROM daily_sales "
            "WHERE day > ? AND day <= ? ORDER BY day",
            (have, last),
        ).fetchall()
        dev = {d: i for i, d in enumerate(self.sim.device_ids)}
        sku = {s: i for i, s in enumerate(self.sim.sku_ids)}
        by_day: dict[int, list[tuple[int, int, int, float, float]]] = {}
        for day, d, s, u, r, c in rows:
            by_day.setdefault(int(day), []).append((dev[d], sku[s], int(u), float(r), float(c)))
        for day in range(have + 1, last + 1):
            part = by_day.get(day, [])
            self._days.append(
                (
                    np.array([p[0] for p in part], dtype=np.int64),
                    np.array([p[1] for p in part], dtype=np.int64),
                    np.array([p[2] for p in part], dtype=np.int64),
                    np.array([p[3] for p in part], dtype=np.float64),
                    np.array([p[4] for p in part], dtype=np.float64),
                )
            )
        self._cache.clear()

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


@dataclass(frozen=True, eq=False)
class StockView:
    """Shelves, prices and warehouse of one simulator state, as arrays in world order.

    expired: units already expired today; expiring: unexpired units that expire within 7 days;
    next_expiry: the earliest expiry day (first day on which they are expired) among the unexpired
    units, 0 where there are none.
    """

    day: int
    shelf_units: IntArray  # (M, K)
    shelf_expired: IntArray
    shelf_expiring: IntArray
    shelf_next_expiry: IntArray
    price_fen: IntArray  # (M, K)
    wh_units: IntArray  # (K,)
    wh_expired: IntArray
    wh_expiring: IntArray
    wh_next_expiry: IntArray
    transit_units: IntArray  # (K,)

    @classmethod
    def from_sim(cls, sim: Simulator) -> StockView:
        """Take the snapshot (vectorised over the simulator's batch arrays)."""
        d = sim.day
        M, K = sim.n_machines, sim.n_products
        b = sim.batch_arrays()
        s_exp, s_soon, s_next = _expiry_arrays(
            b["shelf_machine"] * K + b["shelf_product"], b["shelf_qty"], b["shelf_expiry"], d, M * K
        )
        w_exp, w_soon, w_next = _expiry_arrays(b["wh_product"], b["wh_qty"], b["wh_expiry"], d, K)
        return cls(
            day=d,
            shelf_units=sim.shelf_units(),
            shelf_expired=s_exp.reshape(M, K),
            shelf_expiring=s_soon.reshape(M, K),
            shelf_next_expiry=s_next.reshape(M, K),
            price_fen=sim.price_matrix_fen(),
            wh_units=sim.warehouse_units(),
            wh_expired=w_exp,
            wh_expiring=w_soon,
            wh_next_expiry=w_next,
            transit_units=sim.in_transit_units(),
        )


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
    catalog: CatalogIndex
    sales: SalesBook
    calendar: CalendarIndex
    weather: WeatherIndex
    locations: tuple[str, ...]
    site_types: tuple[str, ...]
    _version: tuple[int, int, bool, int] | None = None
    _stock: StockView | None = None
    _since: list[int | None] | None = None

    @classmethod
    def of(cls, sim: Simulator) -> Views:
        """Views of `sim`."""
        world = sim.world
        return cls(
            sim=sim,
            catalog=CatalogIndex.from_world(world),
            sales=SalesBook(sim),
            calendar=CalendarIndex.from_world(world),
            weather=WeatherIndex.from_world(world),
            locations=tuple(world.machines["location"].astype(str)),
            site_types=tuple(world.machines["site_type"].astype(str)),
        )

    def _check(self) -> None:
        version = state_version(self.sim)
        if version != self._version:
            self._version = version
            self._stock = None
            self._since = None

    def stock(self) -> StockView:
        """The stock snapshot of the current state."""
        self._check()
        if self._stock is None:
            self._stock = StockView.from_sim(self.sim)
        return self._stock

    def days_since_visit(self) -> list[int | None]:
        """Days since each machine's last visit (0 = today, None = never), in world order.

        A machine touched today was visited today; otherwise its last visit is the latest day of
        its rows in the `visits` records.
        """
        self._check()
        if self._since is None:
            sim = self.sim
            last = dict(sim.records.connection.execute("SELECT device_id, MAX(day) FROM visits GROUP BY device_id"))
            for device in sim.visits_today():
                last[device] = sim.day
            self._since = [None if d not in last else sim.day - int(last[d]) for d in sim.device_ids]
        return self._since


# ------------------------------------------------------------------------------------------------ calendar

WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True, eq=False)
class CalendarIndex:
    """The published special days of the world's calendar: public holidays and makeup workdays.

    A holiday is a day off by law (day_type 'holiday', weekends inside a holiday included); a
    makeup workday is a Saturday or Sunday on which people work to bridge a holiday. Days are
    simulation day numbers (day 1 = the world's start date); they may run past the horizon.
    """

    days: IntArray
    entries: tuple[dict[str, Any], ...]

    @classmethod
    def from_world(cls, world: World) -> CalendarIndex:
        """Collect the special days of `world.calendar`."""
        cal = world.calendar
        dates = pd.to_datetime(cal["date"])
        day_no = ((dates - pd.Timestamp(world.start_date)).dt.days + 1).to_numpy(np.int64)
        weekday = dates.dt.day_of_week.to_numpy()
        workday = cal["is_workday"].to_numpy(dtype=bool)
        holiday = (cal["day_type"].astype(str) == "holiday").to_numpy()
        makeup = workday & (weekday >= 5)
        names = cal["holiday_name"].fillna("").astype(str).to_numpy(dtype=object)
        keep = np.flatnonzero((holiday | makeup) & (day_no >= 1))
        order = keep[np.argsort(day_no[keep], kind="stable")]
        entries = tuple(
            {
                "day": int(day_no[i]),
                "date": dates.iloc[i].date().isoformat(),
                "weekday": WEEKDAY_NAMES[int(weekday[i])],
                "kind": "holiday" if holiday[i] else "makeup_workday",
                "name": names[i] or None,
                "is_workday": bool(workday[i]),
            }
            for i in order
        )
        return cls(days=day_no[order], entries=entries)

    def between(self, first: int, last: int) -> list[dict[str, Any]]:
        """Special days with day number in [first, last]."""
        lo = int(np.searchsorted(self.days, first, side="left"))
        hi = int(np.searchsorted(self.days, last, side="right"))
        return [dict(e) for e in self.entries[lo:hi]]


# ------------------------------------------------------------------------------------------------ weather


@dataclass(frozen=True, eq=False)
class WeatherIndex:
    """What the weather tool shows on each day: today's settlement weather and the forecasts issued today.

    Lead 0 of the world's forecast table is the settlement weather (what demand is settled with);
    leads 1-7 are the forecasts issued that morning. Days without a forecast row fall back to the
    settlement weather.
    """

    start: pd.Timestamp
    forecast: dict[int, list[tuple[int, int, float, float]]]  # issue day -> (target day, lead, t, p)
    settlement: dict[int, tuple[float, float]]  # day -> (t_max_c, precip_mm)

    @classmethod
    def from_world(cls, world: World) -> WeatherIndex:
        """Index the world's forecasts and settlement weather by simulation day."""
        start = pd.Timestamp(world.start_date)
        wx = world.weather
        wx_day = ((pd.to_datetime(wx["date"]) - start).dt.days + 1).to_numpy(np.int64)
        settlement = {
            int(d): (float(t), float(p))
            for d, t, p in zip(wx_day, wx["t_max_c"], wx["precip_mm"], strict=True)
            if pd.notna(t) and pd.notna(p)
        }
        fc = world.forecast
        forecast: dict[int, list[tuple[int, int, float, float]]] = {}
        if len(fc):
            issue = ((pd.to_datetime(fc["issue_date"]) - start).dt.days + 1).to_numpy(np.int64)
            target = ((pd.to_datetime(fc["target_date"]) - start).dt.days + 1).to_numpy(np.int64)
            for i, t_day, lead, t, p in zip(
                issue, target, fc["lead"].to_numpy(np.int64), fc["t_max_c"], fc["precip_mm"], strict=True
            ):
                forecast.setdefault(int(i), []).append((int(t_day), int(lead), float(t), float(p)))
        return cls(start=start, forecast=forecast, settlement=settlement)

    def week(self, day: int) -> list[dict[str, Any]]:
        """Today (lead 0) and the next seven days, as issued on `day`."""
        issued = {lead: (t_day, t, p) for t_day, lead, t, p in self.forecast.get(day, [])}
        out = []
        for lead in range(8):
            target = day + lead
            if lead in issued:
                _, t, p = issued[lead]
                basis = "settlement" if lead == 0 else "forecast"
            elif target in self.settlement:
                t, p = self.settlement[target]
                basis = "settlement"
            else:
                continue
            date = self.start + pd.Timedelta(days=target - 1)
            out.append(
                {
                    "day": target,
                    "date": date.date().isoformat(),
                    "weekday": WEEKDAY_NAMES[date.day_of_week],
                    "lead": lead,
                    "t_max_c": round(t, 1),
                    "precip_mm": round(p, 1),
                    "basis": basis,
                }
            )
        return out

"""The simulator: one run of the benchmark on a frozen world, as a library object without I/O.

Life cycle (gymnasium-like)::

    sim = Simulator(world, seed=1)          # = reset(seed=1): day 1 has started
    sim.place_order([{"sku_id": "SKU0001", "qty": 40}])
    report = sim.end_day()                  # demand, sales, fines, visits; day 2 starts
    ...                                     # after day `horizon` is ended, sim.done is True

A day: start (due orders land in the warehouse, batches reaching their expiry day turn expired and
their cost is written off, warehouse rent is charged on every unit held and the fixed fee on every
machine) -> the action window (the mutating methods and the read-only accessors) -> `end_day()`
(demand is realised on the shelves and prices then in force, sales take the earliest-expiring units,
expired units sold draw the fine, touched machines pay one visit each, the day's records are
written) -> the next day starts. Money is exact integer fen inside; accessors give CNY.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from autovend.errors import BundleError, EpisodeOver
from autovend.sim import inventory as inv
from autovend.sim.demand import (
    DemandInputs,
    demand_uniforms,
    environment_for_day,
    expected_demand,
    realize_demand,
    shocks,
)
from autovend.sim.hidden import HiddenLog
from autovend.sim.items import ItemError, as_mapping, field_repr, parse_price_fen, parse_qty
from autovend.sim.money import band_fen, from_fen, to_fen
from autovend.sim.records import RECORD_TABLES, RecordStore
from autovend.sim.results import (
    COST_KINDS,
    Accepted,
    Arrival,
    Balance,
    BatchResult,
    DayInfo,
    DayReport,
    DayStart,
    Rejected,
)
from autovend.world.model import World

EXPIRING_WITHIN_DAYS = 7  # "expiring soon" = unexpired today and expired within this many days
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
PHYSICAL_ACTIONS = ("restock", "reduce", "delist")

IntArray = npt.NDArray[np.int64]

# Ledger accounts: "cash" rows are cash flows (cash = start cash + their sum); "inventory" rows move
# the cost value of unexpired stock (purchases in, cost of goods sold, expiry and discard write-offs
# out), so net assets = start cash + the sum of all rows.
LEDGER_COLUMNS = ["day", "account", "kind", "amount_fen", "ref"]


@dataclass
class _State:
    """Everything that changes during a run (pickled whole by checkpoints)."""

    seed: int
    day: int
    done: bool
    cash_fen: int
    xi: npt.NDArray[np.float64]  # (M, horizon) demand shocks
    shelf_q: IntArray  # (M, K) units on shelves, expired included
    shelf_n: IntArray  # (M,) units on each machine's shelves (row sums of shelf_q)
    wh_q: IntArray  # (K,) units in the warehouse, expired included
    transit_q: IntArray  # (K,) units ordered and not yet arrived
    price_fen: IntArray  # (M, K) prices in force
    shelves: dict[tuple[int, int], inv.Batches]
    warehouse: dict[int, inv.Batches]
    shelf_book: inv.ExpiryBook  # shelf units and cost by expiry day (all machines)
    wh_book: inv.ExpiryBook  # warehouse units and cost by expiry day
    orders: dict[int, inv.Order]
    pending: dict[int, list[int]]  # arrival day -> ids of orders landing then
    next_order_id: int
    touched: dict[int, int]  # machine -> accepted physical operations today
    last_visit: IntArray  # (M,) last day with a visit, 0 = never
    ordered: IntArray  # (K,) units ever ordered
    sold: IntArray  # (K,) units ever sold
    discarded: IntArray  # (K,) units ever discarded
    ledger: list[tuple[int, str, str, int, str]]
    day_costs: dict[str, int]  # today's cash costs by kind
    day_expiry_fen: int
    day_discard_fen: int
    day_start: DayStart | None = None
    reports: list[DayReport] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class _DayDemand:
    """One day's demand and sales on the stocked block: arrays are (len(rows), len(cols))."""

    day: int
    rows: IntArray  # machines with at least one unit on the shelf
    cols: IntArray  # products with at least one unit on some shelf
    q: IntArray  # shelf units when demand was realised
    prices: IntArray  # prices in force (fen)
    rates: npt.NDArray[np.float64]  # expected demand
    demand: IntArray
    sales: IntArray
    expired_sold: IntArray
    revenue: IntArray  # fen
    cogs: IntArray  # fen, unexpired units sold at cost
    units_before: IntArray  # (M,) all machines
    expired_before: IntArray  # (M,)

    def per_machine(self, x: np.ndarray) -> np.ndarray:
        """Row sums of a block array spread to all M machines (zeros where nothing stood)."""
        out = np.zeros(len(self.units_before), dtype=x.dtype)
        out[self.rows] = x.sum(axis=1)
        return out


class Simulator:
    """A run of the AutoVend benchmark on `world`; see the module docstring for the day cycle.

    Mutating methods take a list of item dicts and return a `BatchResult`; items are checked one by
    one, in order, against the state left by the items before; a rejected item changes nothing and
    triggers no visit. After the last day is ended every mutating call raises `EpisodeOver`.
    Read-only accessors return plain Python values or DataFrames in CNY; arrays are in world order
    (machines as in `world.machines`, products as in `world.catalog`).
    """

    def __init__(self, world: World, *, seed: int = 0) -> None:
        self._setup(world)
        self.records: RecordStore
        self.hidden: HiddenLog
        self._s: _State
        self.reset(seed=seed)

    @classmethod
    def _restore(cls, world: World, state: _State, records: bytes, hidden: HiddenLog) -> Simulator:
        """A simulator continuing from saved parts (see `autovend.sim.checkpoint`)."""
        sim = cls.__new__(cls)
        sim._setup(world)
        sim._s = state
        sim.records = RecordStore(RECORD_TABLES, data=records)
        sim.hidden = hidden
        return sim

    def _setup(self, world: World) -> None:
        """Everything fixed by the world: ids, indexes, prices and costs in fen, fees, day tables."""
        _check_world(world)
        self.world = world
        eco = world.economics
        self.n_machines = world.n_machines
        self.n_products = world.n_products
        self.horizon_days = world.horizon_days
        self.device_ids: tuple[str, ...] = tuple(world.machines["device_id"].astype(str))
        self.sku_ids: tuple[str, ...] = tuple(world.catalog["sku_id"].astype(str))
        self._device_index = {d: i for i, d in enumerate(self.device_ids)}
        self._sku_index = {s: i for i, s in enumerate(self.sku_ids)}
        self._device_arr = np.array(self.device_ids, dtype=object)
        self._sku_arr = np.array(self.sku_ids, dtype=object)
        self.capacity: IntArray = world.machines["capacity"].to_numpy().astype(np.int64)
        self._capacity = [int(c) for c in self.capacity]
        self.ref_fen: IntArray = np.array([to_fen(float(x)) for x in world.catalog["ref_price"]], dtype=np.int64)
        self.cost_fen: IntArray = np.array([to_fen(float(x)) for x in world.catalog["unit_cost"]], dtype=np.int64)
        self._cost = [int(c) for c in self.cost_fen]
        self.shelf_life: IntArray = world.catalog["shelf_life_days"].to_numpy().astype(np.int64)
        bands = [band_fen(int(r), eco.price_band) for r in self.ref_fen]
        self.price_lo_fen: IntArray = np.array([b[0] for b in bands], dtype=np.int64)
        self.price_hi_fen: IntArray = np.array([b[1] for b in bands], dtype=np.int64)
        self.start_cash_fen = to_fen(eco.start_cash)
        self.rent_fen_per_unit = to_fen(eco.warehouse_rent_per_unit_day)
        self.daily_fee_fen = to_fen(eco.machine_rent_per_day) * self.n_machines
        self.visit_fen = to_fen(eco.visit_fee)
        self.fine_fen = to_fen(eco.expired_sale_fine)
        self._leads, self._lead_cdf = inv.lead_time_table(eco.lead_time_pmf)
        self._demand = DemandInputs.from_world(world)
        self._days = _DayTable(world)

    # ------------------------------------------------------------------ life cycle

    def reset(self, *, seed: int | None = None) -> DayStart:
        """Start a new run at day 1 (day-1 rent and fee charged) and return the start of day 1.

        `seed` defaults to the seed of the current run. Records of the previous run are dropped.
        """
        if seed is None:
            seed = self._s.seed if hasattr(self, "_s") else 0
        seed = int(seed)
        if seed < 0:
            raise ValueError(f"seed must be >= 0, got {seed}")
        M, K = self.n_machines, self.n_products
        if hasattr(self, "records"):
            self.records.close()
        self.records = RecordStore(RECORD_TABLES)
        self.hidden = HiddenLog()
        self._write_static_records()
        self._s = _State(
            seed=seed,
            day=1,
            done=False,
            cash_fen=self.start_cash_fen,
            xi=shocks(seed, M, self.horizon_days, self.world.shock_sigma, self.world.shock_rho),
            shelf_q=np.zeros((M, K), dtype=np.int64),
            shelf_n=np.zeros(M, dtype=np.int64),
            wh_q=np.zeros(K, dtype=np.int64),
            transit_q=np.zeros(K, dtype=np.int64),
            price_fen=np.tile(self.ref_fen, (M, 1)),
            shelves={},
            warehouse={},
            shelf_book=inv.ExpiryBook(),
            wh_book=inv.ExpiryBook(),
            orders={},
            pending={},
            next_order_id=1,
            touched={},
            last_visit=np.zeros(M, dtype=np.int64),
            ordered=np.zeros(K, dtype=np.int64),
            sold=np.zeros(K, dtype=np.int64),
            discarded=np.zeros(K, dtype=np.int64),
            ledger=[],
            day_costs=dict.fromkeys(COST_KINDS, 0),
            day_expiry_fen=0,
            day_discard_fen=0,
        )
        self._start_day(1)
        return self.day_start

    def _write_static_records(self) -> None:
        m = self.world.machines
        self.records.insert(
            "devices",
            zip(
                self.device_ids,
                m["location"].astype(str),
                m["site_type"].astype(str),
                (int(c) for c in self.capacity),
                strict=True,
            ),
        )
        c = self.world.catalog
        self.records.insert(
            "catalog",
            zip(
                self.sku_ids,
                c["name"].astype(str),
                c["category_l1"].astype(str),
                c["category_l2"].astype(str),
                (from_fen(x) for x in self.ref_fen),
                (from_fen(x) for x in self.cost_fen),
                (int(x) for x in self.shelf_life),
                strict=True,
            ),
        )

    def _start_day(self, d: int) -> None:
        """Arrivals, expiry, warehouse rent and the fixed fee of day `d`."""
        s = self._s
        s.day = d
        s.touched = {}
        s.day_costs = dict.fromkeys(COST_KINDS, 0)
        s.day_discard_fen = 0
        arrivals: list[Arrival] = []
        for oid in sorted(s.pending.pop(d, [])):
            o = s.orders[oid]
            o.arrived = True
            expiry = d + int(self.shelf_life[o.k])
            inv.add(s.warehouse.setdefault(o.k, []), [(expiry, o.qty)])
            s.wh_book.add(expiry, o.qty, o.qty * o.unit_cost_fen)
            s.wh_q[o.k] += o.qty
            s.transit_q[o.k] -= o.qty
            arrivals.append(Arrival(oid, self.sku_ids[o.k], o.qty, expiry))
        if arrivals:
            self.records.insert("arrivals", ((d, a.order_id, a.sku_id, a.qty, a.expiry_day) for a in arrivals))
            self.records.executemany(
                "UPDATE orders SET arrived_day = ? WHERE order_id = ?", ((d, a.order_id) for a in arrivals)
            )
        shelf_units, shelf_fen = s.shelf_book.on(d)
        wh_units, wh_fen = s.wh_book.on(d)
        expired_units = shelf_units + wh_units
        expiry_fen = shelf_fen + wh_fen
        s.day_expiry_fen = expiry_fen
        if expiry_fen:
            s.ledger.append((d, "inventory", "expiry", -expiry_fen, ""))
        wh_units = int(s.wh_q.sum())
        rent = wh_units * self.rent_fen_per_unit
        self._charge("warehouse_rent", rent, "")
        self._charge("daily_fee", self.daily_fee_fen, "")
        delayed = tuple(sorted(oid for ids in s.pending.values() for oid in ids if s.orders[oid].delayed_on(d)))
        s.day_start = DayStart(
            info=self.day_info(d),
            arrivals=tuple(arrivals),
            expired_units=expired_units,
            expiry_writeoff_fen=expiry_fen,
            warehouse_rent_fen=rent,
            daily_fee_fen=self.daily_fee_fen,
            warehouse_units=wh_units,
            delayed_order_ids=delayed,
        )

    def _charge(self, kind: str, fen: int, ref: str) -> None:
        """Pay a cash cost of `kind` today (ledger and the day's cost totals)."""
        s = self._s
        s.cash_fen -= fen
        s.day_costs[kind] += fen
        if fen:
            s.ledger.append((s.day, "cash", kind, -fen, ref))

    def _check_open(self) -> None:
        if self._s.done:
            raise EpisodeOver(f"the episode ended after day {self.horizon_days}; start a new run with reset(seed=...)")

    # ------------------------------------------------------------------ remote actions

    def place_order(self, items: Sequence[Any]) -> BatchResult:
        """Order warehouse stock: items {sku_id, qty, supplier_id?}; cash is debited at once.

        Each accepted item is one order with its own id; it lands at the start of placement day +
        its lead time (drawn per order from `Economics.lead_time_pmf`; promised: the nominal lead).
        """
        return self._batch("place_order", items, self._order_one)

    def _order_one(self, item: Mapping[str, Any]) -> dict[str, Any]:
        s = self._s
        k = self._sku(item)
        qty = parse_qty(item)
        supplier = item.get("supplier_id")
        default = self.world.economics.default_supplier
        if supplier is None:
            supplier = default
        elif supplier != default:
            raise ItemError(
                "unknown_supplier",
                f"supplier_id {field_repr(supplier)} does not exist; use {default!r} or omit it",
            )
        oid = s.next_order_id
        s.next_order_id += 1
        lead = inv.lead_time(s.seed, oid, self._leads, self._lead_cdf)
        nominal = self.world.economics.lead_time_nominal_days
        order = inv.Order(
            order_id=oid,
            k=k,
            qty=qty,
            unit_cost_fen=int(self.cost_fen[k]),
            supplier_id=str(supplier),
            placed_day=s.day,
            eta_day=s.day + nominal,
            arrival_day=s.day + lead,
        )
        s.orders[oid] = order
        s.pending.setdefault(order.arrival_day, []).append(oid)
        cost = qty * order.unit_cost_fen
        self._charge("purchase", cost, f"order {oid}")
        s.ledger.append((s.day, "inventory", "purchase", cost, f"order {oid}"))
        s.ordered[k] += qty
        s.transit_q[k] += qty
        self.records.insert(
            "orders",
            [
                (
                    oid,
                    s.day,
                    self.sku_ids[k],
                    qty,
                    from_fen(order.unit_cost_fen),
                    order.supplier_id,
                    order.eta_day,
                    None,
                )
            ],
        )
        self.hidden.append_row("lead_times", (oid, s.day, lead, order.arrival_day))
        return {
            "order_id": oid,
            "sku_id": self.sku_ids[k],
            "qty": qty,
            "unit_cost": from_fen(order.unit_cost_fen),
            "total_cost": from_fen(cost),
            "eta_day": order.eta_day,
            "eta_date": self._days.date_str(order.eta_day),
        }

    def adjust_price(self, items: Sequence[Any]) -> BatchResult:
        """Set prices per machine and SKU: items {device_id, sku_id, price}; the SKU need not be stocked.

        The price (CNY) is rounded half-up to the fen, then must lie within the band (inclusive) on the
        reference price. Setting the price in force is accepted and changes nothing.
        """
        return self._batch("adjust_price", items, self._price_one)

    def _price_one(self, item: Mapping[str, Any]) -> dict[str, Any]:
        s = self._s
        m = self._device(item)
        k = self._sku(item)
        p = parse_price_fen(item)
        lo, hi = int(self.price_lo_fen[k]), int(self.price_hi_fen[k])
        if not lo <= p <= hi:
            a, b = self.world.economics.price_band
            ref = from_fen(int(self.ref_fen[k]))
            raise ItemError(
                "price_out_of_band",
                f"price {from_fen(p):.2f} of {self.sku_ids[k]} is outside "
                f"{from_fen(lo):.2f}-{from_fen(hi):.2f} "
                f"({a} to {b} x the reference price {ref:.2f}); pick a price in that range",
            )
        old = int(s.price_fen[m, k])
        if p != old:
            s.price_fen[m, k] = p
            self.records.insert(
                "price_changes", [(s.day, self.device_ids[m], self.sku_ids[k], from_fen(old), from_fen(p))]
            )
        return {
            "device_id": self.device_ids[m],
            "sku_id": self.sku_ids[k],
            "old_price": from_fen(old),
            "new_price": from_fen(p),
            "changed": p != old,
        }

    def discard(self, items: Sequence[Any]) -> BatchResult:
        """Destroy warehouse units: items {sku_id, qty}, earliest-expiring first.

        Expired units go at no loss (their cost was written off when they expired); unexpired units
        are an early-disposal loss at cost.
        """
        return self._batch("discard", items, self._discard_one)

    def _discard_one(self, item: Mapping[str, Any]) -> dict[str, Any]:
        s = self._s
        k = self._sku(item)
        qty = parse_qty(item)
        have = int(s.wh_q[k])
        if qty > have:
            raise ItemError(
                "insufficient_stock",
                f"the warehouse holds {have} units of {self.sku_ids[k]}; discard at most {have}",
            )
        parts = self._take_warehouse(k, qty)
        unexpired, expired = inv.split_expired(parts, s.day)
        loss = unexpired * int(self.cost_fen[k])
        s.discarded[k] += qty
        s.day_discard_fen += loss
        if loss:
            s.ledger.append((s.day, "inventory", "discard", -loss, self.sku_ids[k]))
        self.records.insert("discards", [(s.day, self.sku_ids[k], qty, expired, from_fen(loss))])
        return {
            "sku_id": self.sku_ids[k],
            "qty": qty,
            "expired_qty": expired,
            "cost_written_off": from_fen(loss),
        }

    # ------------------------------------------------------------------ physical actions

    def restock(self, items: Sequence[Any]) -> BatchResult:
        """Move warehouse units onto a shelf: items {device_id, sku_id, qty}; working days only.

        Takes the earliest-expiring warehouse units (expired included; they stay expired on the
        shelf, see `expired_qty` in the result). Limited by warehouse stock and shelf capacity.
        """
        return self._batch("restock", items, self._restock_one, physical=True)

    def _restock_one(self, item: Mapping[str, Any]) -> dict[str, Any]:
        s = self._s
        m = self._device(item)
        k = self._sku(item)
        qty = parse_qty(item)
        have = int(s.wh_q[k])
        if qty > have:
            raise ItemError(
                "insufficient_stock",
                f"the warehouse holds {have} units of {self.sku_ids[k]}; order more or restock at most {have}",
            )
        on_shelf = int(s.shelf_n[m])
        cap = self._capacity[m]
        if qty > cap - on_shelf:
            raise ItemError(
                "capacity_exceeded",
                f"{self.device_ids[m]} holds {on_shelf} of {cap} units; restock at most {cap - on_shelf} "
                "(or reduce/delist other products to make room)",
            )
        parts = self._take_warehouse(k, qty)
        inv.add(s.shelves.setdefault((m, k), []), parts)
        s.shelf_book.add_parts(parts, self._cost[k])
        units = int(s.shelf_q[m, k]) + qty
        s.shelf_q[m, k] = units
        s.shelf_n[m] = on_shelf + qty
        expired = inv.split_expired(parts, s.day)[1] if parts[0][0] <= s.day else 0
        self._visit(m, k, "restock", qty, expired)
        return {
            "device_id": self.device_ids[m],
            "sku_id": self.sku_ids[k],
            "qty": qty,
            "expired_qty": expired,
            "shelf_units": units,
        }

    def reduce(self, items: Sequence[Any]) -> BatchResult:
        """Return shelf units to the warehouse: items {device_id, sku_id, qty}, earliest-expiring first."""
        return self._batch("reduce", items, self._reduce_one, physical=True)

    def _reduce_one(self, item: Mapping[str, Any]) -> dict[str, Any]:
        m = self._device(item)
        k = self._sku(item)
        qty = parse_qty(item)
        have = int(self._s.shelf_q[m, k])
        if qty > have:
            raise ItemError(
                "insufficient_shelf_stock",
                f"{self.device_ids[m]} holds {have} units of {self.sku_ids[k]}; reduce at most {have} (or delist it)",
            )
        return self._unshelve(m, k, qty, "reduce")

    def delist(self, items: Sequence[Any]) -> BatchResult:
        """Return all shelf units of a product to the warehouse: items {device_id, sku_id}."""
        return self._batch("delist", items, self._delist_one, physical=True)

    def _delist_one(self, item: Mapping[str, Any]) -> dict[str, Any]:
        m = self._device(item)
        k = self._sku(item)
        have = int(self._s.shelf_q[m, k])
        if have == 0:
            raise ItemError(
                "not_on_shelf", f"{self.device_ids[m]} holds no unit of {self.sku_ids[k]}; nothing to delist"
            )
        return self._unshelve(m, k, have, "delist")

    def _unshelve(self, m: int, k: int, qty: int, kind: str) -> dict[str, Any]:
        s = self._s
        parts = inv.take(s.shelves[(m, k)], qty)
        if not s.shelves[(m, k)]:
            del s.shelves[(m, k)]
        inv.add(s.warehouse.setdefault(k, []), parts)
        s.shelf_book.remove_parts(parts, self._cost[k])
        s.wh_book.add_parts(parts, self._cost[k])
        s.wh_q[k] += qty
        s.shelf_q[m, k] -= qty
        s.shelf_n[m] -= qty
        _, expired = inv.split_expired(parts, s.day)
        self._visit(m, k, kind, qty, expired)
        return {
            "device_id": self.device_ids[m],
            "sku_id": self.sku_ids[k],
            "qty": qty,
            "expired_qty": expired,
            "shelf_units": int(s.shelf_q[m, k]),
        }

    def _take_warehouse(self, k: int, qty: int) -> inv.Parts:
        s = self._s
        parts = inv.take(s.warehouse[k], qty)
        if not s.warehouse[k]:
            del s.warehouse[k]
        s.wh_q[k] -= qty
        s.wh_book.remove_parts(parts, self._cost[k])
        return parts

    def _visit(self, m: int, k: int, kind: str, qty: int, expired: int) -> None:
        s = self._s
        s.touched[m] = s.touched.get(m, 0) + 1
        s.last_visit[m] = s.day
        self.records.insert_row("shelf_events", (s.day, self.device_ids[m], self.sku_ids[k], kind, qty, expired))

    def _not_workday(self) -> ItemError:
        """The rejection of every physical item on a day off."""
        info = self.day_info(self._s.day)
        why = f"a {info.day_type}" + (f" ({info.holiday_name})" if info.holiday_name else "")
        nxt = self._days.next_workday(self._s.day)
        when = f"the next working day is day {nxt} ({self.world.date_of(nxt)})" if nxt else "no working day follows"
        return ItemError("not_workday", f"day {self._s.day} ({info.date}) is {why}, staff make no site visits; {when}")

    # ------------------------------------------------------------------ item plumbing

    def _device(self, item: Mapping[str, Any]) -> int:
        v = item.get("device_id")
        m = self._device_index.get(v) if isinstance(v, str) else None
        if m is None:
            raise ItemError(
                "unknown_device",
                f"device_id {field_repr(item.get('device_id'))} is not one of the {self.n_machines} machines "
                f"(e.g. {self.device_ids[0]!r}); check the device list",
            )
        return m

    def _sku(self, item: Mapping[str, Any]) -> int:
        v = item.get("sku_id")
        k = self._sku_index.get(v) if isinstance(v, str) else None
        if k is None:
            raise ItemError(
                "unknown_sku",
                f"sku_id {field_repr(item.get('sku_id'))} is not in the catalog (e.g. {self.sku_ids[0]!r}); "
                "search the catalog for valid ids",
            )
        return k

    def _batch(
        self,
        action: str,
        items: Sequence[Any],
        one: Callable[[Mapping[str, Any]], dict[str, Any]],
        *,
        physical: bool = False,
    ) -> BatchResult:
        """Check and carry out items one by one; collect accepted and rejected items."""
        self._check_open()
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
            raise TypeError(f"{action} takes a list of item dicts, got {type(items).__name__}")
        day_off = self._not_workday() if physical and not self._days.is_workday(self._s.day) else None
        accepted: list[Accepted] = []
        rejected: list[Rejected] = []
        for i, raw in enumerate(items):
            is_map = type(raw) is dict or isinstance(raw, Mapping)
            try:
                if not is_map:
                    as_mapping(raw)  # raises invalid_item
                if day_off is not None:
                    raise ItemError(day_off.code, day_off.message)
                detail = one(raw)
            except ItemError as err:
                rejected.append(Rejected(i, dict(raw) if is_map else raw, err.code, err.message))
            else:
                accepted.append(Accepted(i, dict(raw), detail))
        self.records.flush()
        return BatchResult(action, self._s.day, tuple(accepted), tuple(rejected))

    # ------------------------------------------------------------------ settlement

    def end_day(self) -> DayReport:
        """Close the action window: realise demand, settle the day, start the next one (if any).

        Returns the day's `DayReport`; its `next_day` is the start of the following day, or None
        after the last day (then `done` is True and every further action raises `EpisodeOver`).
        """
        self._check_open()
        s = self._s
        d = s.day
        day = self._realize_demand(d)
        s.sold[day.cols] += day.sales.sum(axis=0)
        revenue_fen, cogs_fen = int(day.revenue.sum()), int(day.cogs.sum())
        s.cash_fen += revenue_fen
        if revenue_fen:
            s.ledger.append((d, "cash", "sales", revenue_fen, ""))
        if cogs_fen:
            s.ledger.append((d, "inventory", "cogs", -cogs_fen, ""))
        self._charge("expired_fine", int(day.expired_sold.sum()) * self.fine_fen, "")
        visited = sorted(s.touched)
        for m in visited:
            self._charge("visit", self.visit_fen, self.device_ids[m])
        tally = self._tally(d)
        report = DayReport(
            info=self.day_info(d),
            start=self.day_start,
            units_sold=int(day.sales.sum()),
            expired_units_sold=int(day.expired_sold.sum()),
            revenue_fen=revenue_fen,
            cogs_fen=cogs_fen,
            costs_fen=dict(s.day_costs),
            expiry_writeoff_fen=s.day_expiry_fen,
            discard_writeoff_fen=s.day_discard_fen,
            visited=tuple(self.device_ids[m] for m in visited),
            balance=Balance(s.cash_fen, tally["shelf_fen"], tally["warehouse_fen"], tally["in_transit_fen"]),
            machine_table=self._machine_table(day),
            next_day=None,
            done=False,
        )
        self._write_day_records(day, report, tally)
        if d >= self.horizon_days:
            s.done = True
        else:
            self._start_day(d + 1)
        self.records.flush()
        report = dataclasses.replace(report, next_day=None if s.done else s.day_start, done=s.done)
        s.reports.append(report)
        return report

    def _realize_demand(self, d: int) -> _DayDemand:
        """Demand on the shelves and prices in force; sales take the earliest-expiring units.

        Only the stocked block (machines with any unit x products on any shelf) is computed: a
        product with no unit has no attraction and no demand, and F counts all units either way.
        Uniforms are drawn for every product so that each product keeps its own draw.
        """
        s = self._s
        q = s.shelf_q
        units_before = s.shelf_n.copy()
        expired_before = np.zeros(self.n_machines, dtype=np.int64)
        if s.shelf_book.expired(d)[0]:  # walk the shelves only when some expired unit is on one
            for (m, _), b in s.shelves.items():
                if b[0][0] <= d:
                    expired_before[m] += inv.expired(b, d)
        rows = np.flatnonzero(units_before > 0)
        cols = np.flatnonzero(q[rows].any(axis=0))
        block = np.ix_(rows, cols)
        qb = q[block]
        prices = s.price_fen[block]
        t_max, precip, day_type = self._days.weather(d)
        env = environment_for_day(self._demand, t_max, precip, day_type)[block]
        ratio = prices / self.ref_fen[cols]
        rates = expected_demand(self._demand, qb, ratio, env, s.xi[rows, d - 1], rows, cols)
        uniforms = demand_uniforms(s.seed, d, rows, self.n_products, self.n_machines)[:, cols]
        demand = realize_demand(rates, uniforms)
        sales = np.minimum(demand, qb)
        exp_sold = np.zeros_like(sales)
        ii, jj = np.nonzero(sales)
        shelves = s.shelves
        unit_cost = self._cost
        sold_units: dict[int, int] = {}  # by expiry day, booked out of the shelf book after the loop
        sold_cost: dict[int, int] = {}
        for i, j, m, k, n in zip(
            ii.tolist(),
            jj.tolist(),
            rows[ii].tolist(),
            cols[jj].tolist(),
            sales[ii, jj].tolist(),
            strict=True,
        ):
            b = shelves[(m, k)]
            front = b[0]
            if front[0] > d and front[1] > n:  # the common case: the front batch is fresh and covers the sale
                front[1] -= n
                e = front[0]
                sold_units[e] = sold_units.get(e, 0) + n
                sold_cost[e] = sold_cost.get(e, 0) + n * unit_cost[k]
                continue
            front_expired = front[0] <= d
            parts = inv.take(b, n)  # expired units sit in front and leave first
            for e, q in parts:
                sold_units[e] = sold_units.get(e, 0) + q
                sold_cost[e] = sold_cost.get(e, 0) + q * unit_cost[k]
            if front_expired:
                exp_sold[i, j] = inv.split_expired(parts, d)[1]
            if not b:
                del shelves[(m, k)]
        for e, n in sold_units.items():
            s.shelf_book.remove(e, n, sold_cost[e])
        s.shelf_q[block] -= sales
        s.shelf_n[rows] -= sales.sum(axis=1)
        revenue = sales * prices
        cogs = (sales - exp_sold) * self.cost_fen[cols]
        return _DayDemand(
            day=d,
            rows=rows,
            cols=cols,
            q=qb,
            prices=prices,
            rates=rates,
            demand=demand,
            sales=sales,
            expired_sold=exp_sold,
            revenue=revenue,
            cogs=cogs,
            units_before=units_before,
            expired_before=expired_before,
        )

    def _machine_table(self, day: _DayDemand) -> dict[str, np.ndarray]:
        """Per-machine view of the day that the agent may see (shelf before sales, sales, gross profit)."""
        n_skus = np.zeros(self.n_machines, dtype=np.int64)
        n_skus[day.rows] = np.count_nonzero(day.q, axis=1)
        sold_out = np.zeros(self.n_machines, dtype=np.int64)
        sold_out[day.rows] = np.count_nonzero((day.q > 0) & (day.sales == day.q), axis=1)
        return {
            "device_id": self._device_arr,
            "units_before": day.units_before,
            "expired_before": day.expired_before,
            "n_skus": n_skus,
            "free_capacity": self.capacity - day.units_before,
            "empty": day.units_before == 0,
            "sold_out": sold_out,
            "units_sold": day.per_machine(day.sales),
            "expired_units_sold": day.per_machine(day.expired_sold),
            "revenue": day.per_machine(day.revenue) / 100.0,
            "gross_profit": day.per_machine(day.revenue - day.cogs) / 100.0,
        }

    def _write_day_records(self, day: _DayDemand, report: DayReport, tally: dict[str, int]) -> None:
        """Write the day's rows: daily_sales, visits, daily_costs, daily_summary and the hidden tables."""
        s = self._s
        d, date_s = day.day, self._days.date_str(day.day)
        dev = self._device_arr[day.rows]
        ii, kk = np.nonzero(day.sales)
        n = len(ii)
        self.records.insert(
            "daily_sales",
            zip(
                [d] * n,
                [date_s] * n,
                dev[ii].tolist(),
                self._sku_arr[day.cols[kk]].tolist(),
                day.sales[ii, kk].tolist(),
                (day.revenue[ii, kk] / 100.0).tolist(),
                (day.cogs[ii, kk] / 100.0).tolist(),
                day.expired_sold[ii, kk].tolist(),
                (day.expired_sold[ii, kk] * self.fine_fen / 100.0).tolist(),
                strict=True,
            ),
        )
        self.records.insert("visits", ((d, self.device_ids[m], n_ops) for m, n_ops in sorted(s.touched.items())))
        costs = report.costs_fen
        self.records.insert("daily_costs", ((d, date_s, kind, from_fen(costs[kind])) for kind in COST_KINDS))
        bal = report.balance
        self.records.insert(
            "daily_summary",
            [
                (
                    d,
                    date_s,
                    bal.cash,
                    bal.net_assets,
                    report.units_sold,
                    report.expired_units_sold,
                    from_fen(report.revenue_fen),
                    from_fen(report.cogs_fen),
                    from_fen(report.gross_profit_fen),
                    *(from_fen(costs[k]) for k in COST_KINDS),
                    from_fen(report.expiry_writeoff_fen),
                    from_fen(report.discard_writeoff_fen),
                    from_fen(report.net_fen),
                    len(report.visited),
                    tally["shelf_units"],
                    tally["shelf_expired"],
                    tally["warehouse_units"],
                    tally["warehouse_expired"],
                    tally["in_transit_units"],
                    from_fen(tally["shelf_fen"]),
                    from_fen(tally["warehouse_fen"]),
                    from_fen(tally["in_transit_fen"]),
                )
            ],
        )
        ri, rk = np.nonzero(day.rates > 0)
        n = len(ri)
        self.hidden.append(
            "demand",
            {
                "day": np.full(n, d, dtype=np.int64),
                "device_id": dev[ri],
                "sku_id": self._sku_arr[day.cols[rk]],
                "shelf_units": day.q[ri, rk],
                "price": day.prices[ri, rk] / 100.0,
                "rate": day.rates[ri, rk],
                "demand": day.demand[ri, rk],
                "sales": day.sales[ri, rk],
                "lost": day.demand[ri, rk] - day.sales[ri, rk],
            },
        )
        M = self.n_machines
        days = np.full(M, d, dtype=np.int64)
        self.hidden.append("shocks", {"day": days, "device_id": self._device_arr, "xi": s.xi[:, d - 1].copy()})
        mt = report.machine_table
        self.hidden.append(
            "machine_days",
            {
                "day": days,
                "device_id": self._device_arr,
                "units_before": mt["units_before"],
                "expired_before": mt["expired_before"],
                "n_skus": mt["n_skus"],
                "free_capacity": mt["free_capacity"],
                "empty": mt["empty"].astype(np.int64),
                "sold_out": mt["sold_out"],
                "units_sold": mt["units_sold"],
                "revenue": mt["revenue"],
                "gross_profit": mt["gross_profit"],
                "expected_units": day.per_machine(day.rates),
                "lost_units": day.per_machine(day.demand - day.sales),
            },
        )

    # ------------------------------------------------------------------ accessors: time

    @property
    def seed(self) -> int:
        """The seed of this run."""
        return self._s.seed

    @property
    def day(self) -> int:
        """Current simulation day, 1..horizon (stays at the horizon once the episode is over)."""
        return self._s.day

    @property
    def date(self) -> dt.date:
        """Calendar date of the current day."""
        return self.world.date_of(self._s.day)

    @property
    def weekday(self) -> str:
        """English weekday name of the current day."""
        return WEEKDAYS[self.date.weekday()]

    @property
    def is_workday(self) -> bool:
        """True when physical actions are possible today."""
        return self._days.is_workday(self._s.day)

    @property
    def done(self) -> bool:
        """True once the last day has been ended."""
        return self._s.done

    @property
    def today(self) -> DayInfo:
        """Calendar facts of the current day."""
        return self.day_info(self._s.day)

    def next_workday(self, day: int | None = None) -> int:
        """The first working day after `day` (default today), as a day number; 0 if the calendar has none."""
        return self._days.next_workday(self._s.day if day is None else day)

    def day_info(self, day: int) -> DayInfo:
        """Calendar facts of any day covered by the world's calendar (days may exceed the horizon)."""
        return self._days.info(day)

    @property
    def day_start(self) -> DayStart:
        """What happened at the start of the current day (arrivals, expiry, rent, fee, delayed orders)."""
        assert self._s.day_start is not None
        return self._s.day_start

    @property
    def reports(self) -> tuple[DayReport, ...]:
        """Reports of every settled day, in order."""
        return tuple(self._s.reports)

    # ------------------------------------------------------------------ accessors: money

    @property
    def cash_fen(self) -> int:
        """Cash in fen (exact)."""
        return self._s.cash_fen

    @property
    def cash(self) -> float:
        """Cash in CNY (may be negative)."""
        return from_fen(self._s.cash_fen)

    def balance(self) -> Balance:
        """Cash, shelf, warehouse and in-transit value at cost (unexpired units only), and net assets."""
        t = self._tally(self._s.day)
        return Balance(self._s.cash_fen, t["shelf_fen"], t["warehouse_fen"], t["in_transit_fen"])

    @property
    def net_assets(self) -> float:
        """Eq. (1) in CNY: cash + cost of unexpired units on shelves, in the warehouse and in transit."""
        return self.balance().net_assets

    def ledger(self) -> pd.DataFrame:
        """Every money movement: day, account (cash | inventory), kind, amount (CNY), amount_fen, ref.

        cash = start cash + sum of the cash rows; inventory at cost = sum of the inventory rows
        (purchase in; cogs, expiry and discard write-offs out); net assets = start cash + sum of all.
        """
        df = pd.DataFrame(self._s.ledger, columns=LEDGER_COLUMNS)
        df.insert(3, "amount", df["amount_fen"] / 100.0)
        return df

    def ledger_totals_fen(self) -> dict[str, int]:
        """Sum of the ledger by account (fen): {'cash': ..., 'inventory': ...}."""
        out = {"cash": 0, "inventory": 0}
        for _, account, _, amount, _ in self._s.ledger:
            out[account] += amount
        return out

    def _tally(self, day: int) -> dict[str, int]:
        """Units (all and expired) and cost value of unexpired units, by place, on `day`."""
        s = self._s
        cost = self.cost_fen
        shelf_by_k = s.shelf_q.sum(axis=0)
        se, sef = s.shelf_book.expired(day)
        we, wef = s.wh_book.expired(day)
        return {
            "shelf_units": int(shelf_by_k.sum()),
            "shelf_expired": se,
            "shelf_fen": int(shelf_by_k @ cost) - sef,
            "warehouse_units": int(s.wh_q.sum()),
            "warehouse_expired": we,
            "warehouse_fen": int(s.wh_q @ cost) - wef,
            "in_transit_units": int(s.transit_q.sum()),
            "in_transit_fen": int(s.transit_q @ cost),
        }

    # ------------------------------------------------------------------ accessors: stock

    def devices(self) -> pd.DataFrame:
        """One row per machine with its shelf totals and visits.

        Columns: device_id, location, site_type, capacity, units_on_shelf, n_skus, free_capacity,
        expired_units, expiring_7d_units, days_since_visit (<NA> if never visited), visited_today.
        """
        s = self._s
        d = s.day
        M = self.n_machines
        exp = np.zeros(M, dtype=np.int64)
        soon = np.zeros(M, dtype=np.int64)
        for (m, _), b in s.shelves.items():
            exp[m] += inv.expired(b, d)
            soon[m] += inv.expiring(b, d, EXPIRING_WITHIN_DAYS)
        units = s.shelf_q.sum(axis=1)
        since = pd.array([d - int(v) if v > 0 else None for v in s.last_visit], dtype="Int64")
        mach = self.world.machines
        return pd.DataFrame(
            {
                "device_id": self.device_ids,
                "location": mach["location"].astype(str).to_numpy(),
                "site_type": mach["site_type"].astype(str).to_numpy(),
                "capacity": self.capacity,
                "units_on_shelf": units,
                "n_skus": np.count_nonzero(s.shelf_q, axis=1),
                "free_capacity": self.capacity - units,
                "expired_units": exp,
                "expiring_7d_units": soon,
                "days_since_visit": since,
                "visited_today": [m in s.touched for m in range(M)],
            }
        )

    def shelf(self, device_id: str | None = None) -> pd.DataFrame:
        """Products on the shelves of one machine or all (rows with units > 0).

        Columns: device_id, sku_id, units, expired_units, expiring_7d_units, price, ref_price.
        Raises KeyError for an unknown device_id.
        """
        s = self._s
        d = s.day
        only = None if device_id is None else self._device_index[device_id]
        rows = []
        for (m, k), b in sorted(s.shelves.items()):
            if only is not None and m != only:
                continue
            rows.append(
                (
                    self.device_ids[m],
                    self.sku_ids[k],
                    inv.total(b),
                    inv.expired(b, d),
                    inv.expiring(b, d, EXPIRING_WITHIN_DAYS),
                    from_fen(int(s.price_fen[m, k])),
                    from_fen(int(self.ref_fen[k])),
                )
            )
        cols = ["device_id", "sku_id", "units", "expired_units", "expiring_7d_units", "price", "ref_price"]
        return pd.DataFrame(rows, columns=cols)

    def warehouse(self) -> pd.DataFrame:
        """Warehouse stock by SKU (rows with units > 0).

        Columns: sku_id, units, expired_units, expiring_7d_units, unit_cost, value_at_cost (of the
        unexpired units only).
        """
        d = self._s.day
        rows = []
        for k, b in sorted(self._s.warehouse.items()):
            n, e = inv.total(b), inv.expired(b, d)
            c = int(self.cost_fen[k])
            rows.append(
                (
                    self.sku_ids[k],
                    n,
                    e,
                    inv.expiring(b, d, EXPIRING_WITHIN_DAYS),
                    from_fen(c),
                    from_fen((n - e) * c),
                )
            )
        cols = ["sku_id", "units", "expired_units", "expiring_7d_units", "unit_cost", "value_at_cost"]
        return pd.DataFrame(rows, columns=cols)

    def warehouse_batches(self) -> pd.DataFrame:
        """Warehouse batches: sku_id, qty, arrival_day, expiry_day (first expired day), expired (today)."""
        d = self._s.day
        rows = [
            (self.sku_ids[k], q, e - int(self.shelf_life[k]), e, e <= d)
            for k, b in sorted(self._s.warehouse.items())
            for e, q in b
        ]
        return pd.DataFrame(rows, columns=["sku_id", "qty", "arrival_day", "expiry_day", "expired"])

    def shelf_batches(self, device_id: str | None = None) -> pd.DataFrame:
        """Shelf batches: device_id, sku_id, qty, arrival_day, expiry_day, expired (today)."""
        d = self._s.day
        only = None if device_id is None else self._device_index[device_id]
        rows = [
            (self.device_ids[m], self.sku_ids[k], q, e - int(self.shelf_life[k]), e, e <= d)
            for (m, k), b in sorted(self._s.shelves.items())
            if only is None or m == only
            for e, q in b
        ]
        return pd.DataFrame(rows, columns=["device_id", "sku_id", "qty", "arrival_day", "expiry_day", "expired"])

    def batch_arrays(self) -> dict[str, IntArray]:
        """Shelf and warehouse batches as flat arrays (no DataFrame; for fast read-only views).

        shelf_machine, shelf_product, shelf_qty, shelf_expiry: one entry per shelf batch (machine and
        product indexes in world order); wh_product, wh_qty, wh_expiry: one per warehouse batch.
        Expiry days are as in `shelf_batches` (the first day on which the units are expired).
        """
        sm, sk, sq, se = [], [], [], []
        for (m, k), b in self._s.shelves.items():
            for e, q in b:
                sm.append(m)
                sk.append(k)
                sq.append(q)
                se.append(e)
        wk, wq, we = [], [], []
        for k, b in self._s.warehouse.items():
            for e, q in b:
                wk.append(k)
                wq.append(q)
                we.append(e)
        out = {
            "shelf_machine": sm,
            "shelf_product": sk,
            "shelf_qty": sq,
            "shelf_expiry": se,
            "wh_product": wk,
            "wh_qty": wq,
            "wh_expiry": we,
        }
        return {name: np.array(v, dtype=np.int64) for name, v in out.items()}

    def in_transit(self) -> pd.DataFrame:
        """Orders not yet arrived; the actual arrival day stays hidden.

        Columns: order_id, sku_id, qty, unit_cost, value_at_cost, placed_day, eta_day (promised),
        delayed (past the promised day and not arrived).
        """
        s = self._s
        rows = []
        for oid in sorted(oid for ids in s.pending.values() for oid in ids):
            o = s.orders[oid]
            rows.append(
                (
                    oid,
                    self.sku_ids[o.k],
                    o.qty,
                    from_fen(o.unit_cost_fen),
                    from_fen(o.qty * o.unit_cost_fen),
                    o.placed_day,
                    o.eta_day,
                    o.delayed_on(s.day),
                )
            )
        cols = ["order_id", "sku_id", "qty", "unit_cost", "value_at_cost", "placed_day", "eta_day", "delayed"]
        return pd.DataFrame(rows, columns=cols)

    def visits_today(self) -> dict[str, int]:
        """Machines touched today and their accepted operations (each pays one visit at end of day)."""
        return {self.device_ids[m]: n for m, n in sorted(self._s.touched.items())}

    def price(self, device_id: str, sku_id: str) -> float:
        """Price in force (CNY) of a product at a machine. Raises KeyError for unknown ids."""
        return from_fen(int(self._s.price_fen[self._device_index[device_id], self._sku_index[sku_id]]))

    def prices(self, device_id: str | None = None, *, changed_only: bool = False) -> pd.DataFrame:
        """Prices in force, for one machine or all: device_id, sku_id, price, ref_price.

        Every product, or with `changed_only` only those set away from the reference price. Raises
        KeyError for an unknown device_id.
        """
        pf = self._s.price_fen
        ms = np.arange(self.n_machines) if device_id is None else np.array([self._device_index[device_id]])
        mm, kk = np.nonzero(pf[ms] != self.ref_fen) if changed_only else np.indices((len(ms), self.n_products))
        mm, kk = ms[mm.ravel()], kk.ravel()
        return pd.DataFrame(
            {
                "device_id": self._device_arr[mm],
                "sku_id": self._sku_arr[kk],
                "price": pf[mm, kk] / 100.0,
                "ref_price": self.ref_fen[kk] / 100.0,
            }
        )

    def price_band(self, sku_id: str) -> tuple[float, float]:
        """Lowest and highest allowed price (CNY, inclusive) of a product."""
        k = self._sku_index[sku_id]
        return from_fen(int(self.price_lo_fen[k])), from_fen(int(self.price_hi_fen[k]))

    # ------------------------------------------------------------------ accessors: arrays (world order)

    def device_index(self, device_id: str) -> int:
        """Row of a machine in world order. Raises KeyError for an unknown device_id."""
        return self._device_index[device_id]

    def sku_index(self, sku_id: str) -> int:
        """Column of a product in catalog order. Raises KeyError for an unknown sku_id."""
        return self._sku_index[sku_id]

    def shelf_units(self) -> IntArray:
        """(M, K) units on shelves, expired included (a copy)."""
        return self._s.shelf_q.copy()

    def price_matrix_fen(self) -> IntArray:
        """(M, K) prices in force in fen (a copy)."""
        return self._s.price_fen.copy()

    def warehouse_units(self) -> IntArray:
        """(K,) units in the warehouse, expired included (a copy)."""
        return self._s.wh_q.copy()

    def in_transit_units(self) -> IntArray:
        """(K,) units ordered and not yet arrived (a copy)."""
        return self._s.transit_q.copy()

    def expired_by(self, day: int | None = None) -> tuple[IntArray, IntArray]:
        """Units that are expired on `day` (default today; expiry_day <= day): shelves (M, K), warehouse (K,).

        With a future day this tells what will have expired by then if nothing moves.
        """
        s = self._s
        d = s.day if day is None else int(day)
        shelf = np.zeros((self.n_machines, self.n_products), dtype=np.int64)
        if s.shelf_book.expired(d)[0]:
            for (m, k), b in s.shelves.items():
                if b[0][0] <= d:
                    shelf[m, k] = inv.expired(b, d)
        wh = np.zeros(self.n_products, dtype=np.int64)
        if s.wh_book.expired(d)[0]:
            for k, b in s.warehouse.items():
                if b[0][0] <= d:
                    wh[k] = inv.expired(b, d)
        return shelf, wh

    def unit_flows(self) -> dict[str, IntArray]:
        """(K,) unit counts: ordered, in_transit, warehouse, shelves, sold, discarded.

        Conservation: ordered == in_transit + warehouse + shelves + sold + discarded, per product.
        """
        return {
            "ordered": self._s.ordered.copy(),
            "in_transit": self.in_transit_units(),
            "warehouse": self.warehouse_units(),
            "shelves": self._s.shelf_q.sum(axis=0),
            "sold": self._s.sold.copy(),
            "discarded": self._s.discarded.copy(),
        }

    # ------------------------------------------------------------------ checkpoints

    def save(self, path: str | Path) -> Path:
        """Write the whole run (state and both databases) to `path`; see `autovend.sim.checkpoint`."""
        from autovend.sim.checkpoint import save

        return save(self, path)

    @classmethod
    def load(cls, path: str | Path, world: World) -> Simulator:
        """Restore a run saved by `save`; `world` must be the world it was made with."""
        from autovend.sim.checkpoint import load

        return load(path, world)


class _DayTable:
    """Calendar and settlement weather by simulation day (day 1 = world.start_date)."""

    def __init__(self, world: World) -> None:
        self.start = world.start_date
        cal = world.calendar.copy()
        cal_days = (pd.to_datetime(cal["date"]).dt.date - world.start_date).map(lambda x: x.days + 1)
        n = int(cal_days.max()) if len(cal) else 0
        self.n = n
        self._workday = np.zeros(n + 1, dtype=bool)
        self._day_type = [""] * (n + 1)
        self._holiday = [""] * (n + 1)
        for day, w, t, h in zip(cal_days, cal["is_workday"], cal["day_type"], cal["holiday_name"], strict=True):
            if day >= 1:
                self._workday[day] = bool(w)
                self._day_type[day] = str(t)
                self._holiday[day] = "" if pd.isna(h) else str(h)
        self._next_workday = np.zeros(n + 2, dtype=np.int64)
        nxt = 0
        for day in range(n, 0, -1):
            self._next_workday[day] = nxt
            if self._workday[day]:
                nxt = day
        wx = world.weather.copy()
        wx_days = (pd.to_datetime(wx["date"]).dt.date - world.start_date).map(lambda x: x.days + 1)
        self._weather = {
            int(day): (float(t), float(p))
            for day, t, p in zip(wx_days, wx["t_max_c"], wx["precip_mm"], strict=True)
            if day >= 1
        }
        self._dates = [""] + [(self.start + dt.timedelta(days=i)).isoformat() for i in range(n)]

    def _check(self, day: int) -> None:
        if not 1 <= day <= self.n or not self._day_type[day]:
            raise ValueError(f"day {day} is outside the world's calendar (days 1..{self.n})")

    def is_workday(self, day: int) -> bool:
        self._check(day)
        return bool(self._workday[day])

    def next_workday(self, day: int) -> int:
        """The first working day after `day` (0 when the calendar has none)."""
        self._check(day)
        return int(self._next_workday[day])

    def info(self, day: int) -> DayInfo:
        self._check(day)
        date = self.start + dt.timedelta(days=day - 1)
        return DayInfo(
            day=day,
            date=date,
            weekday=WEEKDAYS[date.weekday()],
            is_workday=bool(self._workday[day]),
            day_type=self._day_type[day],
            holiday_name=self._holiday[day],
        )

    def date_str(self, day: int) -> str:
        """ISO date of a day."""
        if 1 <= day < len(self._dates):
            return self._dates[day]
        return (self.start + dt.timedelta(days=day - 1)).isoformat()

    def weather(self, day: int) -> tuple[float, float, str]:
        """(t_max_c, precip_mm, day_type) of the settlement weather of `day`."""
        t, p = self._weather[day]
        return t, p, self._day_type[day]


def _check_world(world: World) -> None:
    """Refuse a world the simulator cannot run, naming every problem."""
    problems: list[str] = []
    horizon = world.horizon_days
    mach, cat = world.machines, world.catalog
    if world.n_machines == 0 or world.n_products == 0:
        problems.append("the world needs at least one machine and one product")
    if mach["device_id"].astype(str).duplicated().any():
        problems.append("device_id values repeat")
    if cat["sku_id"].astype(str).duplicated().any():
        problems.append("sku_id values repeat")
    cap = mach["capacity"].to_numpy()
    if not (np.issubdtype(cap.dtype, np.number) and np.all(cap >= 1) and np.all(cap == np.floor(cap))):
        problems.append("every machine capacity must be a whole number >= 1")
    life = cat["shelf_life_days"].to_numpy()
    if not (np.issubdtype(life.dtype, np.number) and np.all(life >= 1) and np.all(life == np.floor(life))):
        problems.append("every shelf_life_days must be a whole number >= 1")
    ref = cat["ref_price"].to_numpy(dtype=float)
    if not np.all(np.isfinite(ref) & (ref >= 0.01)):
        problems.append("every ref_price must be a finite number of at least 0.01")
    cost = cat["unit_cost"].to_numpy(dtype=float)
    if not np.all(np.isfinite(cost) & (cost >= 0)):
        problems.append("every unit_cost must be a finite number >= 0")
    b = np.asarray(world.base_attraction, dtype=float)
    if not np.all(np.isfinite(b) & (b >= 0)):
        problems.append("base_attraction must be finite and >= 0")
    U = mach["U"].to_numpy(dtype=float)
    if not np.all(np.isfinite(U) & (U >= 0)):
        problems.append("U must be finite and >= 0")
    try:  # a site type without its own settings reads the pooled `unknown` ones (DemandSettings)
        world.demand.elasticity_of(mach["site_type"].astype(str).to_numpy())
    except KeyError as exc:
        problems.append(f"a site type has no elasticity and the settings have no pooled `unknown` one ({exc})")
    dates = {world.date_of(d) for d in range(1, horizon + 1)}
    wx = world.weather.dropna(subset=["t_max_c", "precip_mm"])
    missing_wx = dates - set(pd.to_datetime(wx["date"]).dt.date)
    if missing_wx:
        problems.append(f"settlement weather lacks {len(missing_wx)} horizon days (first {min(missing_wx)})")
    missing_cal = dates - set(pd.to_datetime(world.calendar["date"]).dt.date)
    if missing_cal:
        problems.append(f"the calendar lacks {len(missing_cal)} horizon days (first {min(missing_cal)})")
    if problems:
        raise BundleError(
            f"world {world.name!r} cannot be simulated: " + "; ".join(problems) + ". Re-export or rebuild the world."
        )

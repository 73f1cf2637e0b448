"""Property-based invariants over random action sequences (hypothesis stateful testing).

A small world with short shelf lives and small machines, so expiry, fines, capacity limits and the
end of the episode all happen within a few simulated days. Items mix valid and broken values.
"""

from __future__ import annotations

from decimal import Decimal
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from autovend.errors import EpisodeOver
from autovend.sim import Simulator
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world

pytestmark = pytest.mark.slow  # a module of pipelines, clusters or long episodes

HORIZON = 20
CAPACITY = 25


@cache
def small_world() -> World:
    w = toy_world(3, 6, seed=3, economics=Economics(horizon_days=HORIZON))
    cat = w.catalog.copy()
    cat["shelf_life_days"] = [2, 4, 7, 2, 4, 7]
    machines = w.machines.copy()
    machines["capacity"] = CAPACITY
    return w.replace(catalog=cat, machines=machines, name="invariants")


WORLD = small_world()
SKUS = list(WORLD.catalog["sku_id"])
DEVICES = list(WORLD.machines["device_id"])

sku = st.sampled_from(SKUS * 4 + ["NOPE", 7, None])
device = st.sampled_from(DEVICES * 4 + ["X", 3])
qty = st.one_of(st.integers(1, 30), st.integers(1, 30), st.sampled_from([0, -3, 2.5, True, "4", None, 10**7]))
price = st.one_of(
    st.floats(0, 30),
    st.integers(0, 30),
    st.sampled_from(["3", None, Decimal("4.005"), float("nan"), float("inf")]),
)
garbage = st.sampled_from([None, "x", 5, [], ()])


def items(fields: dict, optional: dict | None = None) -> st.SearchStrategy:
    one = st.fixed_dictionaries(fields, optional=optional or {})
    return st.lists(st.one_of(one, one, one, one, garbage), min_size=1, max_size=5)


def snapshot(sim: Simulator) -> tuple:
    return (
        sim.cash_fen,
        sim.shelf_units().tobytes(),
        sim.warehouse_units().tobytes(),
        sim.in_transit_units().tobytes(),
        sim.price_matrix_fen().tobytes(),
        len(sim.ledger()),
        dict(sim.visits_today()),
    )


class SimulatorMachine(RuleBasedStateMachine):
    """Random actions and day ends; the rules hold after every step."""

    @initialize(seed=st.integers(0, 10_000), warm=st.booleans())
    def start(self, seed: int, warm: bool) -> None:
        """A fresh run; `warm` orders every product and stocks the machines on the first working day."""
        self.sim = Simulator(WORLD, seed=seed)
        self.start_fen = self.sim.start_cash_fen
        self.prev_close_fen = self.start_fen
        self._new_day()
        if warm:
            self.place_order([{"sku_id": k, "qty": 40} for k in SKUS])
            while self.sim.in_transit_units().sum() or not self.sim.is_workday:
                self._end_day()
            self._physical("restock", [{"device_id": d, "sku_id": k, "qty": 4} for d in DEVICES for k in SKUS])
            assert self.sim.visits_today() == dict.fromkeys(DEVICES, len(SKUS))

    @precondition(lambda self: not self.sim.done)
    @rule(data=st.data())
    def restock_what_is_there(self, data: st.DataObject) -> None:
        """A valid restock of warehouse stock, so that shelves fill and sell."""
        sim = self.sim
        wh = sim.warehouse_units()
        room = CAPACITY - sim.shelf_units().sum(axis=1)
        ks, ms = np.flatnonzero(wh), np.flatnonzero(room)
        if not len(ks) or not len(ms):
            return
        k = data.draw(st.sampled_from(ks.tolist()))
        m = data.draw(st.sampled_from(ms.tolist()))
        q = data.draw(st.integers(1, int(min(wh[k], room[m]))))
        self._physical("restock", [{"device_id": DEVICES[m], "sku_id": SKUS[k], "qty": q}])

    def _new_day(self) -> None:
        self.touched: set[str] = set()
        self.purchase_fen = 0
        self.wh_at_start = int(self.sim.warehouse_units().sum())

    def _physical(self, method: str, batch: list) -> None:
        sim = self.sim
        before = snapshot(sim)
        res = getattr(sim, method)(batch)
        assert res.n_accepted + res.n_rejected == len(batch)
        if not sim.is_workday:
            assert res.n_accepted == 0
            assert {r.code for r in res.rejected} <= {"not_workday", "invalid_item"}
        self.touched |= {a.detail["device_id"] for a in res.accepted}
        for r in res.rejected:
            event(f"{method} rejected: {r.code}")
        if res.accepted:
            event(f"{method} accepted")
        assert set(sim.visits_today()) == self.touched
        if res.n_accepted == 0:
            assert snapshot(sim) == before  # rejected items change nothing and trigger no visit

    @precondition(lambda self: not self.sim.done)
    @rule(batch=items({"sku_id": sku, "qty": qty}, {"supplier_id": st.sampled_from(["default", "acme"])}))
    def place_order(self, batch: list) -> None:
        sim = self.sim
        cash = sim.cash_fen
        res = sim.place_order(batch)
        spent = sum(a.detail["qty"] * int(sim.cost_fen[sim.sku_index(a.detail["sku_id"])]) for a in res.accepted)
        assert sim.cash_fen == cash - spent
        self.purchase_fen += spent

    @precondition(lambda self: not self.sim.done)
    @rule(batch=items({"device_id": device, "sku_id": sku, "price": price}))
    def adjust_price(self, batch: list) -> None:
        before = snapshot(self.sim)
        res = self.sim.adjust_price(batch)
        last = {(a.detail["device_id"], a.detail["sku_id"]): a.detail["new_price"] for a in res.accepted}
        for (device, sku), price in last.items():  # a pair repeated in a batch ends at its last price
            assert self.sim.price(device, sku) == price
        if res.n_accepted == 0:
            assert snapshot(self.sim) == before

    @precondition(lambda self: not self.sim.done)
    @rule(batch=items({"sku_id": sku, "qty": qty}))
    def discard(self, batch: list) -> None:
        before = snapshot(self.sim)
        res = self.sim.discard(batch)
        if any(a.detail["expired_qty"] for a in res.accepted):
            event("expired units discarded")
        if res.n_accepted == 0:
            assert snapshot(self.sim) == before

    @precondition(lambda self: not self.sim.done)
    @rule(batch=items({"device_id": device, "sku_id": sku, "qty": qty}))
    def restock(self, batch: list) -> None:
        self._physical("restock", batch)

    @precondition(lambda self: not self.sim.done)
    @rule(batch=items({"device_id": device, "sku_id": sku, "qty": qty}))
    def reduce(self, batch: list) -> None:
        self._physical("reduce", batch)

    @precondition(lambda self: not self.sim.done)
    @rule(batch=items({"device_id": device, "sku_id": sku}))
    def delist(self, batch: list) -> None:
        self._physical("delist", batch)

    @precondition(lambda self: not self.sim.done)
    @rule(days=st.integers(1, 3))
    def end_days(self, days: int) -> None:
        for _ in range(days):
            if self.sim.done:
                break
            self._end_day()

    def _end_day(self) -> None:
        sim = self.sim
        before = sim.shelf_units()
        report = sim.end_day()
        after = sim.shelf_units()  # no unit moves between the sales and the next morning
        mt = report.machine_table
        assert np.array_equal(mt["units_before"], before.sum(axis=1))
        assert np.array_equal(mt["units_sold"], (before - after).sum(axis=1))
        assert np.array_equal(mt["sold_out"], ((before > 0) & (after == 0)).sum(axis=1))
        assert np.array_equal(mt["empty"], before.sum(axis=1) == 0)
        if report.units_sold:
            event("units sold")
        if report.expired_units_sold:
            event("expired units sold (fined)")
        if report.expiry_writeoff_fen:
            event("units expired")
        if report.visited:
            event("visit charged")
        costs = report.costs_fen
        assert costs["daily_fee"] == 400 * WORLD.n_machines
        assert costs["warehouse_rent"] == 3 * self.wh_at_start
        assert costs["visit"] == 3_500 * len(self.touched) and set(report.visited) == self.touched
        assert costs["expired_fine"] == 100_000 * report.expired_units_sold
        assert costs["purchase"] == self.purchase_fen
        # the net-asset identity of the day
        assert report.balance.net_assets_fen == self.prev_close_fen + report.net_fen
        self.prev_close_fen = report.balance.net_assets_fen
        summary = sim.records.frame("SELECT * FROM daily_summary WHERE day = ?", (report.day,)).iloc[0]
        assert summary["net_assets"] == report.balance.net_assets and summary["cash"] == report.balance.cash
        assert summary["units_sold"] == report.units_sold
        if report.next_day is None:
            assert sim.done and report.day == HORIZON
            event("episode over")
            return
        self._new_day()
        start = report.next_day
        assert start.warehouse_units == self.wh_at_start
        assert start.warehouse_rent_fen == 3 * self.wh_at_start

    @precondition(lambda self: self.sim.done)
    @rule()
    def after_the_end(self) -> None:
        for call in (self.sim.end_day, lambda: self.sim.restock([]), lambda: self.sim.place_order([])):
            try:
                call()
            except EpisodeOver:
                continue
            raise AssertionError("an action after the last day did not raise EpisodeOver")

    # ------------------------------------------------------------ invariants after every step

    @invariant()
    def units_are_conserved(self) -> None:
        f = self.sim.unit_flows()
        held = f["in_transit"] + f["warehouse"] + f["shelves"] + f["sold"] + f["discarded"]
        assert np.array_equal(f["ordered"], held)
        assert (f["warehouse"] >= 0).all() and (f["shelves"] >= 0).all()

    @invariant()
    def cash_and_net_assets_reconcile_with_the_ledger(self) -> None:
        sim = self.sim
        totals = sim.ledger_totals_fen()
        assert sim.cash_fen == self.start_fen + totals["cash"]
        assert sim.balance().inventory_fen == totals["inventory"]
        assert sim.balance().net_assets_fen == self.start_fen + totals["cash"] + totals["inventory"]

    @invariant()
    def dense_counts_match_the_batches(self) -> None:
        s = self.sim.snapshot().state
        shelf = np.zeros_like(s.shelf_q)
        for (m, k), b in s.shelves.items():
            assert b and all(q > 0 for _, q in b) and [e for e, _ in b] == sorted({e for e, _ in b})
            shelf[m, k] = sum(q for _, q in b)
        assert np.array_equal(shelf, s.shelf_q) and np.array_equal(s.shelf_n, s.shelf_q.sum(axis=1))
        wh = np.zeros_like(s.wh_q)
        for k, b in s.warehouse.items():
            assert b and all(q > 0 for _, q in b)
            wh[k] = sum(q for _, q in b)
        assert np.array_equal(wh, s.wh_q)
        transit = np.zeros_like(s.transit_q)
        for ids in s.pending.values():
            for oid in ids:
                transit[s.orders[oid].k] += s.orders[oid].qty
        assert np.array_equal(transit, s.transit_q)
        for book, places in ((s.shelf_book, s.shelves), (s.wh_book, s.warehouse)):
            units: dict[int, int] = {}
            cost: dict[int, int] = {}
            for key, b in places.items():
                k = key[1] if isinstance(key, tuple) else key
                for e, q in b:
                    units[e] = units.get(e, 0) + q
                    cost[e] = cost.get(e, 0) + q * int(self.sim.cost_fen[k])
            assert book.units == units and book.cost_fen == cost

    @invariant()
    def capacity_and_price_bands_hold(self) -> None:
        sim = self.sim
        assert (sim.shelf_units().sum(axis=1) <= CAPACITY).all()
        p = sim.price_matrix_fen()
        assert (p >= sim.price_lo_fen).all() and (p <= sim.price_hi_fen).all()


SimulatorMachine.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestSimulatorInvariants = SimulatorMachine.TestCase

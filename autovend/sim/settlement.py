"""The turn of a day (`Settlement`): the start of a day and its close.

Start: due orders land in the warehouse, batches reaching their expiry day turn expired and their
cost is written off, warehouse rent is charged on every unit held and the fixed fee on every
machine. Close: demand is realised and sold (`autovend.sim.sales`), expired units sold draw the
fine, touched machines pay one visit each, the day's records are written, the next day starts.
"""

from __future__ import annotations

import dataclasses

from autovend.sim import inventory as inv
from autovend.sim.accounting import Accounts
from autovend.sim.facts import WorldFacts
from autovend.sim.recorder import Recorder
from autovend.sim.results import Arrival, DayReport, DayStart
from autovend.sim.sales import DayDemand, DayDraw, draw_day, machine_table, sell
from autovend.sim.state import SimState


class Settlement:
    """Starts and closes the days of a run."""

    def __init__(self, facts: WorldFacts, state: SimState, accounts: Accounts, recorder: Recorder) -> None:
        self._facts = facts
        self._state = state
        self._accounts = accounts
        self._recorder = recorder
        self._draw: tuple[DayDraw, int, int] | None = None  # a draw made for end_day, its day and records version

    def draw(self) -> DayDraw:
        """Today's demand draw on the shelves as they stand, kept for `end_day` while nothing changes."""
        s = self._state
        s.check_open(self._facts.horizon_days)
        x = draw_day(self._facts, s, s.day)
        self._draw = (x, s.day, self._recorder.records.version)
        return x

    def start_day(self, d: int) -> None:
        """Arrivals, expiry, warehouse rent and the fixed fee of day `d`; sets the state's `day_start`."""
        f, s = self._facts, self._state
        s.day = d
        s.touched = {}
        s.day_costs = dict.fromkeys(f.cost_kinds, 0)
        s.day_discard_fen = 0
        arrivals = self._land_orders(d)
        self._recorder.arrivals(d, arrivals)
        shelf_units, shelf_fen = s.shelf_book.on(d)
        wh_units, wh_fen = s.wh_book.on(d)
        expiry_fen = shelf_fen + wh_fen
        s.day_expiry_fen = expiry_fen
        if expiry_fen:
            self._accounts.move_stock_value("expiry", -expiry_fen, "")
        wh_units_held = int(s.wh_q.sum())
        rent = wh_units_held * f.rent_fen_per_unit
        self._accounts.charge("warehouse_rent", rent, "")
        self._accounts.charge("daily_fee", f.daily_fee_fen, "")
        delayed = tuple(sorted({oid for ids in s.pending.values() for oid in ids if s.orders[oid].delayed_on(d)}))
        s.day_start = DayStart(
            info=f.days.info(d),
            arrivals=tuple(arrivals),
            expired_units=shelf_units + wh_units,
            expiry_writeoff_fen=expiry_fen,
            warehouse_rent_fen=rent,
            daily_fee_fen=f.daily_fee_fen,
            warehouse_units=wh_units_held,
            delayed_order_ids=delayed,
        )

    def _land_orders(self, d: int) -> list[Arrival]:
        """Put the orders due on day `d` into the warehouse, in order id order."""
        f, s = self._facts, self._state
        arrivals: list[Arrival] = []
        for oid in sorted(s.pending.pop(d, [])):
            o = s.orders[oid]
            n = o.landing_qty()  # the whole order, or one part of a split one
            o.landed += n
            o.arrived = o.landed >= o.qty
            expiry = d + int(f.shelf_life[o.k])
            inv.add(s.warehouse.setdefault(o.k, []), [(expiry, n)])
            s.wh_book.add(expiry, n, n * o.unit_cost_fen)
            s.wh_q[o.k] += n
            s.transit_q[o.k] -= n
            arrivals.append(Arrival(oid, f.sku_ids[o.k], n, expiry))
        return arrivals

    def end_day(self) -> DayReport:
        """Close the action window: realise demand, settle the day, start the next one (if any)."""
        f, s = self._facts, self._state
        s.check_open(f.horizon_days)
        d = s.day
        kept, self._draw = self._draw, None
        # every change of the shelves or prices writes a record, so an unchanged version means the same block
        draw = kept[0] if kept is not None and kept[1:] == (d, self._recorder.records.version) else None
        day = sell(f, s, d, draw)
        s.sold[day.cols] += day.sales.sum(axis=0)
        self._accounts.receive_sales(int(day.revenue.sum()))
        cogs_fen = int(day.cogs.sum())
        if cogs_fen:
            self._accounts.move_stock_value("cogs", -cogs_fen, "")
        self._accounts.charge("expired_fine", int(day.expired_sold.sum()) * f.fine_fen, "")
        visited = sorted(s.touched)
        for m in visited:
            self._accounts.charge("visit", f.visit_fen, f.device_ids[m])
        report = self._report(day, visited)
        if d >= f.horizon_days:
            s.done = True
        else:
            self.start_day(d + 1)
        self._recorder.flush()
        report = dataclasses.replace(report, next_day=None if s.done else s.day_start, done=s.done)
        s.reports.append(report)
        return report

    def _report(self, day: DayDemand, visited: list[int]) -> DayReport:
        """The settled day's report (before the next day starts), its records written."""
        f, s = self._facts, self._state
        assert s.day_start is not None
        tally = self._accounts.tally(day.day)
        report = DayReport(
            info=f.days.info(day.day),
            start=s.day_start,
            units_sold=int(day.sales.sum()),
            expired_units_sold=int(day.expired_sold.sum()),
            revenue_fen=int(day.revenue.sum()),
            cogs_fen=int(day.cogs.sum()),
            costs_fen=dict(s.day_costs),
            expiry_writeoff_fen=s.day_expiry_fen,
            discard_writeoff_fen=s.day_discard_fen,
            visited=tuple(f.device_ids[m] for m in visited),
            balance=tally.balance(s.cash_fen),
            machine_table=machine_table(f, day),
            next_day=None,
            done=False,
        )
        self._recorder.day(day, report, tally, s.touched, s.xi[:, day.day - 1].copy())
        return report

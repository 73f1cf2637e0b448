"""Writing a run's records: the agent-visible SQLite tables (`RecordStore`) and the hidden log (`Recorder`).

Rows are queued in the store, sealed into one write group at the end of every simulator call, and
written to SQLite when the records are read (`autovend.sim.records.RecordStore`). The day's sales
are also kept as arrays (`autovend.sim.saleslog.SalesLog`), which the tools read. The tables and
their columns are documented in `autovend.sim.records`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from autovend.sim import inventory as inv
from autovend.sim.accounting import Tally
from autovend.sim.facts import WorldFacts
from autovend.sim.hidden import HiddenLog
from autovend.sim.money import from_fen
from autovend.sim.records import RecordStore
from autovend.sim.results import COST_KINDS, Arrival, DayReport
from autovend.sim.sales import DayDemand
from autovend.sim.saleslog import SalesLog


class Recorder:
    """Writes the rows of every event of a run into its record store and hidden log."""

    def __init__(self, facts: WorldFacts, records: RecordStore, hidden: HiddenLog, *, restored: bool = False) -> None:
        """`restored`: the records hold days settled before this recorder (a run restored from a snapshot)."""
        self._facts = facts
        self.records = records
        self.hidden = hidden
        self.sales = SalesLog(facts, records, restored=restored)

    def flush(self) -> None:
        """End the call's write group (the end of every simulator call); the rows are written when read."""
        self.records.seal()

    def static(self) -> None:
        """The devices and catalog tables (once, at the start of a run)."""
        f = self._facts
        m = f.world.machines
        self.records.insert(
            "devices",
            zip(
                f.device_ids,
                m["location"].astype(str),
                m["site_type"].astype(str),
                (int(c) for c in f.capacity),
                strict=True,
            ),
        )
        c = f.world.catalog
        self.records.insert(
            "catalog",
            zip(
                f.sku_ids,
                c["name"].astype(str),
                c["category_l1"].astype(str),
                c["category_l2"].astype(str),
                (from_fen(x) for x in f.ref_fen),
                (from_fen(x) for x in f.cost_fen),
                (int(x) for x in f.shelf_life),
                strict=True,
            ),
        )

    def arrivals(self, day: int, arrivals: Sequence[Arrival]) -> None:
        """Orders that landed at the start of `day`: arrivals rows and their orders' arrived_day."""
        if not arrivals:
            return
        self.records.insert("arrivals", ((day, a.order_id, a.sku_id, a.qty, a.expiry_day) for a in arrivals))
        self.records.executemany(
            "UPDATE orders SET arrived_day = ? WHERE order_id = ?", ((day, a.order_id) for a in arrivals)
        )

    def order(self, order: inv.Order, lead: int) -> None:
        """A placed order (its actual lead time goes to the hidden log only)."""
        row = (
            order.order_id,
            order.placed_day,
            self._facts.sku_ids[order.k],
            order.qty,
            from_fen(order.unit_cost_fen + order.premium_fen),
            order.supplier_id,
            order.eta_day,
            None,
        )
        self.records.insert("orders", [row])
        self.hidden.append_row("lead_times", (order.order_id, order.placed_day, lead, order.arrival_day))

    def price_change(self, day: int, m: int, k: int, old_fen: int, new_fen: int) -> None:
        """A price set away from the one in force."""
        f = self._facts
        row = (day, f.device_ids[m], f.sku_ids[k], from_fen(old_fen), from_fen(new_fen))
        self.records.insert("price_changes", [row])

    def discard(self, day: int, k: int, qty: int, expired: int, loss_fen: int) -> None:
        """Warehouse units destroyed."""
        self.records.insert("discards", [(day, self._facts.sku_ids[k], qty, expired, from_fen(loss_fen))])

    def shelf_event(self, day: int, m: int, k: int, kind: str, qty: int, expired: int) -> None:
        """A restock, reduce or delist at a machine."""
        f = self._facts
        self.records.insert_row("shelf_events", (day, f.device_ids[m], f.sku_ids[k], kind, qty, expired))

    def day(self, day: DayDemand, report: DayReport, tally: Tally, touched: dict[int, int], xi: np.ndarray) -> None:
        """The settled day's rows: daily_sales, visits, daily_costs, daily_summary and the hidden tables.

        `touched`: machine -> operations of the day; `xi`: (M,) the day's demand shocks.
        """
        d, date_s = day.day, self._facts.days.date_str(day.day)
        self._daily_sales(day, date_s)
        self.records.insert("visits", [(d, self._facts.device_ids[m], n) for m, n in sorted(touched.items())])
        costs = report.costs_fen
        self.records.insert(
            "daily_costs", ((d, date_s, kind, from_fen(costs[kind])) for kind in self._facts.cost_kinds)
        )
        self.records.insert("daily_summary", [_summary_row(date_s, report, tally)])
        self._hidden_demand(day)
        M = self._facts.n_machines
        self.hidden.append(
            "shocks", {"day": np.full(M, d, dtype=np.int64), "device_id": self._facts.device_arr, "xi": xi}
        )
        self._machine_days(day, report)

    def _daily_sales(self, day: DayDemand, date_s: str) -> None:
        """One daily_sales row per machine and product with a sale (kept as columns, and in the sales log)."""
        f = self._facts
        ii, kk = np.nonzero(day.sales)
        n = len(ii)
        units = day.sales[ii, kk]
        revenue = day.revenue[ii, kk] / 100.0
        cost = day.cogs[ii, kk] / 100.0
        expired = day.expired_sold[ii, kk]
        machine, product = day.rows[ii], day.cols[kk]
        self.sales.append(day.day, (machine, product, units, revenue, cost))
        self.records.insert_columns(
            "daily_sales",
            (
                [day.day] * n,
                [date_s] * n,
                f.device_arr[machine],
                f.sku_arr[product],
                units,
                revenue,
                cost,
                expired,
                expired * f.fine_fen / 100.0,
            ),
        )

    def _hidden_demand(self, day: DayDemand) -> None:
        """Hidden demand rows: every machine and product with a positive expected demand."""
        f = self._facts
        ri, rk = np.nonzero(day.rates > 0)
        n = len(ri)
        self.hidden.append(
            "demand",
            {
                "day": np.full(n, day.day, dtype=np.int64),
                "device_id": f.device_arr[day.rows][ri],
                "sku_id": f.sku_arr[day.cols[rk]],
                "shelf_units": day.q[ri, rk],
                "price": day.prices[ri, rk] / 100.0,
                "rate": day.rates[ri, rk],
                "demand": day.demand[ri, rk],
                "sales": day.sales[ri, rk],
                "lost": day.demand[ri, rk] - day.sales[ri, rk],
            },
        )

    def _machine_days(self, day: DayDemand, report: DayReport) -> None:
        """Hidden machine_days rows: the agent's machine table plus expected and lost units."""
        f = self._facts
        mt = report.machine_table
        self.hidden.append(
            "machine_days",
            {
                "day": np.full(f.n_machines, day.day, dtype=np.int64),
                "device_id": f.device_arr,
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


def _summary_row(date_s: str, report: DayReport, tally: Tally) -> tuple[object, ...]:
    """The daily_summary row of a settled day."""
    bal, costs = report.balance, report.costs_fen
    return (
        report.day,
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
        tally.shelf_units,
        tally.shelf_expired,
        tally.warehouse_units,
        tally.warehouse_expired,
        tally.in_transit_units,
        from_fen(tally.shelf_fen),
        from_fen(tally.warehouse_fen),
        from_fen(tally.in_transit_fen),
    )

"""The daily observation (the JSON of the paper's Appendix A.2) and its compact text form.

Blocks: balance (cash and the cost value of unexpired stock by place, net assets), pnl (yesterday,
last 7 and last 30 settled days), devices (one row per machine), warehouse (totals), in_transit
(orders, units, value, expected arrivals by promised day, delayed orders) and calendar (today and
the published holidays and makeup workdays of the next 14 days), and notices (the texts a world's conditions
announce for the day; absent when there is none). Product-level detail is left to the tools.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from autovend.sim import DayReport, Simulator
from autovend.sim.money import from_fen
from autovend.tools.suppliers import notices
from autovend.tools.views import Views, money, round2, rows_of, table

PNL_WINDOWS: tuple[tuple[str, int], ...] = (("yesterday", 1), ("last_7d", 7), ("last_30d", 30))
PNL_COLUMNS = [
    "window",
    "days",
    "units_sold",
    "revenue",
    "gross_profit",
    "rent",
    "labor",
    "daily_fee",
    "expired_fine",
    "net",
]
DEVICE_COLUMNS = [
    "device_id",
    "location",
    "capacity",
    "units_on_shelf",
    "n_skus",
    "empty_slots",
    "sold_yesterday",
    "sold_7d_avg",
    "expired_units",
    "expiring_7d_units",
    "days_since_visit",
]
CALENDAR_AHEAD_DAYS = 14
EMPTY_SLOT_DAYS = 7  # a product that sold at a machine within this many days and now has no unit there


def pnl_rows(reports: tuple[DayReport, ...]) -> list[list[Any]]:
    """Sums over the last 1, 7 and 30 settled days (money in CNY; labor = site-visit fees)."""
    rows = []
    for name, n in PNL_WINDOWS:
        part = reports[-n:] if reports else ()
        units = sum(r.units_sold for r in part)
        fen = {
            "revenue": sum(r.revenue_fen for r in part),
            "gross_profit": sum(r.gross_profit_fen for r in part),
            "rent": sum(r.costs_fen["warehouse_rent"] for r in part),
            "labor": sum(r.costs_fen["visit"] for r in part),
            "daily_fee": sum(r.costs_fen["daily_fee"] for r in part),
            "expired_fine": sum(r.costs_fen["expired_fine"] for r in part),
            "net": sum(r.net_fen for r in part),
        }
        rows.append([name, len(part), units, *(from_fen(fen[c]) for c in PNL_COLUMNS[3:])])
    return rows


def device_rows(sim: Simulator, views: Views, reports: tuple[DayReport, ...]) -> list[list[Any]]:
    """One row per machine (DEVICE_COLUMNS), in world order."""
    stock = views.stock()
    M = sim.n_machines
    recent = reports[-7:]
    if recent:
        sold = np.array([r.machine_table["units_sold"] for r in recent], dtype=np.int64)
        sold_yesterday = sold[-1]
        sold_avg = sold.sum(axis=0) / len(recent)
    else:
        sold_yesterday = np.zeros(M, dtype=np.int64)
        sold_avg = np.zeros(M)
    win = views.sales.window(EMPTY_SLOT_DAYS)
    sold_recently = np.zeros((M, sim.n_products), dtype=bool)
    sold_recently[win.machine, win.product] = True
    units = stock.shelf_units
    return rows_of(
        list(sim.device_ids),
        list(views.locations),
        sim.capacity.tolist(),
        units.sum(axis=1).tolist(),
        np.count_nonzero(units, axis=1).tolist(),
        (sold_recently & (units == 0)).sum(axis=1).tolist(),
        sold_yesterday.tolist(),
        round2(sold_avg),
        stock.shelf_expired.sum(axis=1).tolist(),
        stock.shelf_expiring.sum(axis=1).tolist(),
        views.days_since_visit(),
    )


def warehouse_block(sim: Simulator, views: Views) -> dict[str, Any]:
    """Warehouse totals: units (expired included), products, value at cost, today's rent rate, expiry."""
    stock = views.stock()
    units = int(stock.wh_units.sum())
    rent = sim.world.economics.warehouse_rent_per_unit_day
    return {
        "units": units,
        "n_skus": int(np.count_nonzero(stock.wh_units)),
        "value_at_cost": from_fen(sim.balance().warehouse_fen),
        "rent_per_day": money(units * rent),
        "expired_units": int(stock.wh_expired.sum()),
        "expiring_7d_units": int(stock.wh_expiring.sum()),
    }


def in_transit_block(sim: Simulator) -> dict[str, Any]:
    """Orders not yet arrived: totals, expected arrivals by promised day, and the delayed orders."""
    rows = sim.in_transit_rows()  # order_id, sku_id, qty, unit_cost, value_at_cost, placed_day, eta_day, delayed
    by_eta: dict[int, list[int]] = {}
    delayed: list[dict[str, Any]] = []
    for order_id, sku_id, qty, _, _, _, eta, late in rows:
        order_id, qty, eta = int(order_id), int(qty), int(eta)
        if late:
            delayed.append(
                {
                    "order_id": order_id,
                    "sku_id": str(sku_id),
                    "qty": qty,
                    "promised_day": eta,
                    "days_late": sim.day - eta,
                }
            )
        else:
            by_eta.setdefault(eta, []).append(qty)
    arrivals = [
        {"day": eta, "date": sim.world.date_of(eta).isoformat(), "orders": len(qs), "units": sum(qs)}
        for eta, qs in sorted(by_eta.items())
    ]
    return {
        "orders": len(rows),
        "units": sum(int(r[2]) for r in rows),
        # summed as a float array, as the amounts were summed before (the same float to the last bit)
        "value_at_cost": money(np.array([r[4] for r in rows], dtype=np.float64).sum()) if rows else 0.0,
        "arrivals": arrivals,
        "delayed": delayed,
    }


def calendar_block(sim: Simulator, views: Views) -> dict[str, Any]:
    """Today's working status and the special days of the next 14 days."""
    info = sim.today
    return {
        "today": {"is_workday": info.is_workday, "holiday_name": info.holiday_name or None},
        "next_14d": [
            {k: e[k] for k in ("date", "weekday", "kind", "name", "is_workday")}
            for e in views.calendar.between(sim.day + 1, sim.day + CALENDAR_AHEAD_DAYS)
        ],
    }


def build_observation(sim: Simulator, views: Views) -> dict[str, Any]:
    """The observation of the current day (see the module docstring)."""
    reports = sim.reports
    return {
        "balance": sim.balance().to_dict(),
        "pnl": table(PNL_COLUMNS, pnl_rows(reports)),
        "devices": table(DEVICE_COLUMNS, device_rows(sim, views, reports)),
        "warehouse": warehouse_block(sim, views),
        "in_transit": in_transit_block(sim),
        "calendar": calendar_block(sim, views),
        **({"notices": shown} if (shown := notices(sim.world, sim.day)) else {}),
    }


def render_json(obj: Any, indent: int = 0) -> str:
    """JSON with one key per line and every table row on one line (compact, still easy to read)."""
    pad = " " * indent
    inner = " " * (indent + 1)
    if isinstance(obj, dict) and obj:
        parts = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {render_json(v, indent + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(parts) + "\n" + pad + "}"
    if isinstance(obj, list) and obj and all(isinstance(x, (list, dict)) for x in obj):
        parts = [inner + json.dumps(x, ensure_ascii=False) for x in obj]
        return "[\n" + ",\n".join(parts) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=False)

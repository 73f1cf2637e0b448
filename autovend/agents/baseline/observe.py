"""Step 1, observe: settled sales, the warehouse, orders in transit and a machine's shelf, read into the agent's books.

The agent keeps its own book of shelves (what it put there minus what sold) and of exposure: a
product-day counts as min(units, facing) / facing of a full day on the shelf (`exposure`), booked
at the end of each day (`record_exposure`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from autovend.agents.baseline.calls import all_rows, ok, sql_rows
from autovend.agents.baseline.state import FloatArray, IntArray, Memory

if TYPE_CHECKING:
    from autovend.session import ToolSession


@dataclass
class Warehouse:
    """The warehouse by product (arrays over the catalog), as get_warehouse shows it, and its usable part."""

    units: IntArray
    expired: IntArray
    expiring: IntArray  # unexpired units that expire within the tools' "expiring soon" window
    next_expiry: IntArray  # day the earliest units expire, 0 = none
    good: IntArray  # usable units: neither expired nor expiring soon


@dataclass(frozen=True)
class ShelfLine:
    """One product on a machine's shelf, as get_device_detail shows it."""

    k: int  # product number
    units: int
    expired: int
    expiring: int  # unexpired units that expire within the tools' "expiring soon" window
    next_expiry: int  # day the earliest units expire, 0 = none


def sync_sales(session: ToolSession, mem: Memory, day: int) -> None:
    """Book the settled sales of `day`: shelves, rolling history, cumulative units, machine gross profit."""
    s, st, W = mem.s, mem.st, mem.cfg.window_days
    sql = (
        "SELECT device_id, sku_id, units, revenue, cost FROM daily_sales "
        f"WHERE day = {int(day)} ORDER BY device_id, sku_id"
    )
    rows = sql_rows(session, sql)
    slot = day % W
    s.units_hist[slot] = 0
    s.gp_hist[slot] = 0.0
    if not rows:
        return
    m = np.fromiter((st.device_index[r[0]] for r in rows), dtype=np.int64, count=len(rows))
    k = np.fromiter((st.sku_index[r[1]] for r in rows), dtype=np.int64, count=len(rows))
    u = np.array([int(r[2]) for r in rows], dtype=np.int64)
    gp = np.array([float(r[3]) - float(r[4]) for r in rows])
    s.units_hist[slot, m, k] = u
    s.cum_units[m, k] += u
    s.shelf[m, k] = np.maximum(s.shelf[m, k] - u, 0)
    s.gp_hist[slot] = np.bincount(m, weights=gp, minlength=len(s.last_visit))


def read_warehouse(session: ToolSession, mem: Memory) -> Warehouse:
    """Warehouse by product: units, expired, expiring soon, next expiry day, usable units."""
    K = len(mem.st.sku_ids)
    units, expired, expiring, next_expiry = (np.zeros(K, dtype=np.int64) for _ in range(4))
    for row in all_rows(session, "get_warehouse", {}):
        k = mem.st.sku_index[row["sku_id"]]
        units[k] = int(row["units"])
        expired[k] = int(row["expired_units"])
        expiring[k] = int(row["expiring_7d_units"])
        next_expiry[k] = int(row["next_expiry_day"] or 0)
    return Warehouse(units, expired, expiring, next_expiry, units - expired - expiring)


def read_in_transit(session: ToolSession, mem: Memory) -> IntArray:
    """Units ordered and not yet arrived, by product."""
    out = np.zeros(len(mem.st.sku_ids), dtype=np.int64)
    sql = "SELECT sku_id, SUM(qty) FROM orders WHERE arrived_day IS NULL GROUP BY sku_id ORDER BY sku_id"
    for sku, qty in sql_rows(session, sql):
        out[mem.st.sku_index[sku]] = int(qty)
    return out


def read_shelf(session: ToolSession, mem: Memory, m: int) -> list[ShelfLine]:
    """The products on machine m's shelf from get_device_detail; resets the agent's book of that shelf to it."""
    s, st = mem.s, mem.st
    res = ok(session.call("get_device_detail", {"device_id": st.device_ids[m], "window_days": 1}), "detail")
    table = res["products"]
    cols = {c: i for i, c in enumerate(table["columns"])}
    out = []
    s.shelf[m] = 0
    for row in table["rows"]:
        units = int(row[cols["units"]])
        if units <= 0:
            continue
        k = st.sku_index[row[cols["sku_id"]]]
        s.shelf[m, k] = units
        out.append(
            ShelfLine(
                k=k,
                units=units,
                expired=int(row[cols["expired_units"]]),
                expiring=int(row[cols["expiring_7d_units"]]),
                next_expiry=int(row[cols["next_expiry_day"]] or 0),
            )
        )
    return out


def exposure(shelf: IntArray, facing: int) -> FloatArray:
    """Exposure-days of one day: min(units, facing) / facing (a thin shelf sells less than a full facing)."""
    return np.minimum(shelf, facing) / float(facing)


def record_exposure(mem: Memory, d: int) -> None:
    """Today's exposure-days (shelf after today's actions) into the rolling and cumulative books."""
    s, cfg = mem.s, mem.cfg
    W = cfg.window_days
    e = exposure(s.shelf, cfg.facing_units)
    s.expo_hist[d % W] = e
    s.units_hist[d % W] = 0
    s.gp_hist[d % W] = 0.0
    if cfg.memory_half_life_days > 0:  # older sales count less: tastes shift with the seasons
        keep = 0.5 ** (1.0 / cfg.memory_half_life_days)
        s.cum_units *= keep
        s.cum_expo *= keep
    s.cum_expo += e

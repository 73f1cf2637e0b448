"""Automatic detectors of the paper's four failure modes (§5.6), each with a count and a few examples.

- infeasible_retries (grounding of action plans): a restock item rejected for insufficient warehouse
  stock whose (device, SKU) had already been rejected for the same reason within
  `retry_window_days` days (the same day included): the agent tried again without the stock.
- dead_stock_orders (planning for inventory costs): an accepted order item of a SKU that sold no unit
  anywhere in the `dead_stock_window_days` days before, while the warehouse already held at least
  `dead_stock_min_units` unexpired units of it at the start of the day (orders on days within the
  first window are not judged). With no recent sales, any stock is more than any number of days of
  them. Unexpired warehouse units are rebuilt from the records: units arrived minus units moved out,
  and at most the units of batches that have not reached their expiry day.
- fragmented_visits (physical execution): a visit to a machine whose sales since its previous visit
  made less gross profit than one visit fee.
- recurring_rejections (use of feedback): a batch call (same tool) whose set of rejected items equals
  the rejected set of a call made on an earlier day.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from autovend.distinct import distinct
from autovend.evaluation.rundata import RunData
from autovend.evaluation.settings import EvalSettings

BATCH_TOOLS = ("place_order", "adjust_price", "discard", "restock", "reduce", "delist")


@dataclass(frozen=True)
class FailureMode:
    """A detector's finding: how often it happened and up to `max_examples` examples (day first)."""

    count: int
    examples: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"count": self.count, "examples": self.examples, **self.extra}


def _rejections(calls: list[dict[str, Any]], tool: str | None = None) -> list[tuple[int, int, str, dict[str, Any]]]:
    """(day, seq, tool, rejected item record) of every rejected item of the batch calls, in call order."""
    out = []
    for c in calls:
        if not c.get("ok") or c.get("tool") not in BATCH_TOOLS or (tool is not None and c.get("tool") != tool):
            continue
        result = c.get("result") or {}
        for rej in result.get("rejected") or []:
            out.append((int(c["day"]), int(c.get("seq", 0)), str(c["tool"]), rej))
    return out


def infeasible_retries(calls: list[dict[str, Any]], window_days: int, max_examples: int) -> FailureMode:
    """Restock items rejected for insufficient stock, retried within `window_days` (see the module docstring)."""
    last: dict[tuple[str, str], int] = {}
    count, total = 0, 0
    examples: list[dict[str, Any]] = []
    for day, _, _, rej in _rejections(calls, "restock"):
        if rej.get("code") != "insufficient_stock" or not isinstance(rej.get("item"), dict):
            continue
        total += 1
        item = rej["item"]
        key = (str(item.get("device_id")), str(item.get("sku_id")))
        if key in last and day - last[key] <= window_days:
            count += 1
            if len(examples) < max_examples:
                examples.append(
                    {"day": day, "device_id": key[0], "sku_id": key[1], "qty": item.get("qty"), "first_day": last[key]}
                )
        last[key] = day
    return FailureMode(count, examples, {"insufficient_stock_items": total})


def recurring_rejections(calls: list[dict[str, Any]], max_examples: int) -> FailureMode:
    """Batch calls whose rejected item set equals that of a call on an earlier day."""
    by_call: dict[int, tuple[int, str, list[str], list[str]]] = {}
    for day, seq, tool, rej in _rejections(calls):
        entry = by_call.setdefault(seq, (day, tool, [], []))
        entry[2].append(json.dumps(rej.get("item"), sort_keys=True, ensure_ascii=False))
        entry[3].append(str(rej.get("code")))
    first: dict[tuple[str, tuple[str, ...]], int] = {}
    count = 0
    examples: list[dict[str, Any]] = []
    for _, (day, tool, items, codes) in sorted(by_call.items()):
        key = (tool, tuple(sorted(items)))
        if key in first and first[key] < day:
            count += 1
            if len(examples) < max_examples:
                examples.append(
                    {
                        "day": day,
                        "tool": tool,
                        "items": len(items),
                        "first_day": first[key],
                        "codes": sorted(set(codes)),
                    }
                )
        first.setdefault(key, day)
    return FailureMode(count, examples, {"calls_with_rejections": len(by_call)})


def machine_gross_profit(run: RunData) -> np.ndarray:
    """(days + 2, M) gross profit (revenue - cost of the unexpired units sold) per day and machine, CNY."""
    devices = {str(d): i for i, d in enumerate(run.world.machines["device_id"])}
    out = np.zeros((run.days + 2, run.world.n_machines))
    sales = run.records["daily_sales"]
    if len(sales):
        m = sales["device_id"].astype(str).map(devices).to_numpy(dtype=np.int64)
        gp = sales["revenue"].to_numpy(dtype=float) - sales["cost"].to_numpy(dtype=float)
        np.add.at(out, (sales["day"].to_numpy(dtype=np.int64), m), gp)
    return out


def visit_days(run: RunData) -> list[np.ndarray]:
    """The sorted visit days of each machine (world order)."""
    visits = run.records["visits"]
    by_device = visits.groupby(visits["device_id"].astype(str))["day"]
    days = {d: distinct(g.to_numpy(dtype=np.int64)) for d, g in by_device}
    return [days.get(str(d), np.zeros(0, dtype=np.int64)) for d in run.world.machines["device_id"]]


def fragmented_visits(run: RunData, max_examples: int) -> FailureMode:
    """Visits whose machine made less gross profit since its previous visit than one visit fee."""
    fee = float(run.world.economics.visit_fee)
    cum = np.cumsum(machine_gross_profit(run), axis=0)
    events = run.records["shelf_events"]
    restocked = events[events["kind"] == "restock"].groupby(["device_id", "day"])["qty"].sum()
    found: list[tuple[int, str, int, float]] = []
    judged = 0
    for m, days in enumerate(visit_days(run)):
        if len(days) < 2:
            continue
        gp = cum[days[1:] - 1, m] - cum[days[:-1] - 1, m]  # days v1 .. v2 - 1
        judged += len(gp)
        device = str(run.world.machines["device_id"].iloc[m])
        for v1, v2, g in zip(days[:-1].tolist(), days[1:].tolist(), gp.tolist(), strict=True):
            if g < fee - 1e-9:
                found.append((v2, device, v1, g))
    found.sort()
    examples = [
        {
            "day": v2,
            "device_id": dev,
            "previous_visit": v1,
            "gross_profit_since": round(g, 2),
            "units_restocked": int(restocked.get((dev, v2), 0)),
        }
        for v2, dev, v1, g in found[:max_examples]
    ]
    return FailureMode(len(found), examples, {"visits_judged": judged, "visit_fee": fee})


def _warehouse_start(run: RunData, skus: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Warehouse units of `skus` at the start of each day (after arrivals), and the units still fresh.

    Both are (days + 3, len(skus)) arrays rebuilt from the records; "fresh" counts the units of the
    batches arrived by that day that have not reached their expiry day (wherever they are now).
    """
    T = run.days
    col = {s: i for i, s in enumerate(skus)}
    flow = np.zeros((T + 3, len(skus)))
    fresh = np.zeros((T + 3, len(skus)))

    def add(frame: pd.DataFrame, qty: np.ndarray, shift: int) -> None:
        keep = frame["sku_id"].astype(str).isin(col).to_numpy() & (frame["day"].to_numpy() + shift <= T + 1)
        k = frame["sku_id"].astype(str)[keep].map(col).to_numpy(dtype=np.int64)
        np.add.at(flow, (frame["day"].to_numpy(dtype=np.int64)[keep] + shift, k), qty[keep])

    arr = run.records["arrivals"]
    add(arr, arr["qty"].to_numpy(dtype=float), 0)
    ev = run.records["shelf_events"]
    sign = np.where(ev["kind"].to_numpy() == "restock", -1.0, 1.0)
    add(ev, sign * ev["qty"].to_numpy(dtype=float), 1)  # moves of day d count from the start of day d + 1
    dis = run.records["discards"]
    add(dis, -dis["qty"].to_numpy(dtype=float), 1)
    level = np.cumsum(flow, axis=0)
    if len(arr):
        keep = arr["sku_id"].astype(str).isin(col).to_numpy()
        k = arr["sku_id"].astype(str)[keep].map(col).to_numpy(dtype=np.int64)
        start = arr["day"].to_numpy(dtype=np.int64)[keep]
        stop = np.minimum(arr["expiry_day"].to_numpy(dtype=np.int64)[keep], T + 2)
        qty = arr["qty"].to_numpy(dtype=float)[keep]
        ok = start <= T + 1
        np.add.at(fresh, (start[ok], k[ok]), qty[ok])
        ok2 = ok & (stop <= T + 1)
        np.subtract.at(fresh, (stop[ok2], k[ok2]), qty[ok2])
        fresh = np.cumsum(fresh, axis=0)
    return level, fresh


def dead_stock_orders(run: RunData, window_days: int, min_units: int, max_examples: int) -> FailureMode:
    """Orders of SKUs with no recent sales while the warehouse already held unexpired units of them."""
    orders = run.records["orders"]
    orders = orders[orders["placed_day"] > window_days]
    if orders.empty:
        return FailureMode(0, [], {"orders_judged": 0})
    skus = sorted(set(orders["sku_id"].astype(str)))
    col = {s: i for i, s in enumerate(skus)}
    T = run.days
    sold = np.zeros((T + 2, len(skus)))
    sales = run.records["daily_sales"]
    keep = sales["sku_id"].astype(str).isin(col).to_numpy()
    np.add.at(
        sold,
        (
            sales["day"].to_numpy(dtype=np.int64)[keep],
            sales["sku_id"].astype(str)[keep].map(col).to_numpy(dtype=np.int64),
        ),
        sales["units"].to_numpy(dtype=float)[keep],
    )
    cum_sold = np.cumsum(sold, axis=0)
    level, fresh = _warehouse_start(run, skus)
    d = orders["placed_day"].to_numpy(dtype=np.int64)
    k = orders["sku_id"].astype(str).map(col).to_numpy(dtype=np.int64)
    recent = cum_sold[d - 1, k] - cum_sold[d - 1 - window_days, k]  # days d - window .. d - 1
    held = np.minimum(level[d, k], fresh[d, k])
    flagged = (recent == 0) & (held >= min_units)
    rows = orders[flagged].assign(held=held[flagged]).sort_values(["placed_day", "order_id"])
    examples = [
        {
            "day": int(r.placed_day),
            "sku_id": str(r.sku_id),
            "qty": int(r.qty),
            "warehouse_units": int(r.held),
            "order_id": int(r.order_id),
        }
        for r in rows.head(max_examples).itertuples()
    ]
    return FailureMode(int(flagged.sum()), examples, {"orders_judged": len(orders)})


def detect_failures(run: RunData, settings: EvalSettings) -> dict[str, FailureMode]:
    """All four detectors (trajectory-based ones find nothing when the run kept no trajectory)."""
    n = settings.max_examples
    return {
        "infeasible_retries": infeasible_retries(run.calls, settings.retry_window_days, n),
        "dead_stock_orders": dead_stock_orders(run, settings.dead_stock_window_days, settings.dead_stock_min_units, n),
        "fragmented_visits": fragmented_visits(run, n),
        "recurring_rejections": recurring_rejections(run.calls, n),
    }

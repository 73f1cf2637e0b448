"""The tables report.html draws, each a pure function of a `RunData` (no I/O, no drawing).

- `machine_revenue`: revenue, units and gross profit per machine (world order, idle machines at 0).
- `site_revenue`: the same per site type, with revenue per machine per day.
- `stockouts`: per day, machines with an empty shelf, products sold out, demand and lost demand (hidden log).
- `price_path`: per day, the price multiplier (price in force / reference price) over the stocked
  slots: mean, min and max, for the whole network and per site type.
- `day_actions`: per day, what the agent did (tool calls from the trajectory, summarised).
- `findings`: every failure-mode finding of the run (`evaluation.failures`), with its day.
- `day_table`: one row per settled day for the day-by-day table (actions, sales, costs, findings).

Every number is finite: days or groups without data are left out, never filled with NaN.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from autovend.evaluation.failures import detect_failures
from autovend.evaluation.rundata import RunData
from autovend.evaluation.settings import EvalSettings
from autovend.tools.registry import MUTATION_TOOLS

ALL_SITES = "all machines"
FINDINGS_CAP = 100_000  # examples asked of each detector for the report: in practice every finding


def machine_revenue(run: RunData) -> pd.DataFrame:
    """Per machine (world order): device_id, site_type, revenue, units, gross_profit (CNY, whole run)."""
    machines = run.world.machines[["device_id", "site_type"]].astype(str).reset_index(drop=True)
    sales = run.records["daily_sales"]
    sales = sales[sales["day"] <= run.days]
    per = pd.DataFrame(
        {
            "device_id": sales["device_id"].astype(str),
            "revenue": sales["revenue"].astype(float),
            "units": sales["units"].astype("int64"),
            "gross_profit": (sales["revenue"] - sales["cost"]).astype(float),
        }
    )
    sums = per.groupby("device_id")[["revenue", "units", "gross_profit"]].sum()
    out = machines.join(sums, on="device_id")
    out[["revenue", "gross_profit"]] = out[["revenue", "gross_profit"]].fillna(0.0).round(2)
    out["units"] = out["units"].fillna(0).astype("int64")
    return out


def site_revenue(run: RunData) -> pd.DataFrame:
    """Per site type (first-seen order): machines, revenue, gross_profit, revenue per machine per day."""
    per = machine_revenue(run)
    g = per.groupby("site_type", sort=False)
    out = g[["revenue", "gross_profit"]].sum().round(2)
    out.insert(0, "machines", g.size())
    days = max(run.days, 1)
    out["revenue_per_machine_day"] = (out["revenue"] / out["machines"] / days).round(2)
    return out.reset_index()


def stockouts(run: RunData) -> pd.DataFrame:
    """Per settled day: empty_machines, sold_out (products whose last unit sold), demand, lost (units), lost_revenue.

    From the hidden log: machine_days gives empty shelves and sell-outs; demand gives the customers'
    demand and the units they could not buy (lost revenue = lost units x the price in force).
    """
    days = pd.Index(np.arange(1, run.days + 1), name="day")
    md = run.hidden["machine_days"]
    md = md[md["day"] <= run.days]
    m = md.groupby("day")[["empty", "sold_out"]].sum().reindex(days, fill_value=0)
    dem = run.hidden["demand"]
    dem = dem[dem["day"] <= run.days]
    d = pd.DataFrame(
        {"day": dem["day"], "demand": dem["demand"], "lost": dem["lost"], "lost_revenue": dem["lost"] * dem["price"]}
    )
    g = d.groupby("day")[["demand", "lost", "lost_revenue"]].sum().reindex(days, fill_value=0)
    return pd.DataFrame(
        {
            "day": days.to_numpy(dtype=np.int64),
            "empty_machines": m["empty"].to_numpy(dtype=np.int64),
            "sold_out": m["sold_out"].to_numpy(dtype=np.int64),
            "demand": g["demand"].to_numpy(dtype=np.int64),
            "lost": g["lost"].to_numpy(dtype=np.int64),
            "lost_revenue": g["lost_revenue"].to_numpy(dtype=float).round(2),
        }
    )


def price_path(run: RunData) -> pd.DataFrame:
    """Price multipliers (price in force / reference price) of the stocked slots per day and site type.

    Columns: day, site_type (`ALL_SITES` for the whole network, then each site type), mean, low, high
    (min and max), slots (stocked machine-product pairs that day). Days without a stocked slot are left out.
    """
    panel = run.panel
    cols = ["day", "site_type", "mean", "low", "high", "slots"]
    if len(panel.day) == 0:
        return pd.DataFrame(columns=cols)
    ref = run.world.catalog["ref_price"].to_numpy(dtype=float)
    site = run.world.machines["site_type"].astype(str).to_numpy()
    slots = pd.DataFrame(
        {"day": panel.day, "site_type": site[panel.machine], "multiplier": panel.price / ref[panel.product]}
    )
    parts = [slots.assign(site_type=ALL_SITES), slots]
    both = pd.concat(parts, ignore_index=True)
    order = {s: i for i, s in enumerate([ALL_SITES, *dict.fromkeys(site)])}
    g = both.groupby(["site_type", "day"], sort=False)["multiplier"]
    out = pd.DataFrame({"mean": g.mean(), "low": g.min(), "high": g.max(), "slots": g.size()}).reset_index()
    out["rank"] = out["site_type"].map(order)
    out = out.sort_values(["rank", "day"], kind="stable").drop(columns="rank").reset_index(drop=True)
    out[["mean", "low", "high"]] = out[["mean", "low", "high"]].round(4)
    return out[cols]


@dataclass(frozen=True)
class DayActions:
    """What the agent did on one day, from its tool calls."""

    calls: int = 0  # every call, reads and end_day included
    errors: int = 0  # calls refused whole
    accepted: int = 0  # items accepted by the batch (mutation) tools
    rejected: int = 0  # items they rejected
    text: str = ""  # e.g. "place_order 1 call (40 items); restock 20 calls (800 items, 3 rejected); 45 reads"


def _describe(batch: dict[str, list[int]], reads: int, errors: int) -> str:
    parts = []
    for tool in MUTATION_TOOLS:
        if tool not in batch:
            continue
        n, acc, rej = batch[tool]
        rejected = f", {rej} rejected" if rej else ""
        parts.append(f"{tool} {n} call{'s' * (n != 1)} ({acc} item{'s' * (acc != 1)}{rejected})")
    if reads:
        parts.append(f"{reads} read{'s' * (reads != 1)}")
    if errors:
        parts.append(f"{errors} refused call{'s' * (errors != 1)}")
    return "; ".join(parts)


def day_actions(calls: list[dict[str, Any]]) -> dict[int, DayActions]:
    """The tool calls of each day, summarised (`DayActions`); days without calls are absent.

    Batch tools count their accepted and rejected items (the result's n_accepted / n_rejected); end_day
    is counted as a call but not described; every other tool is a read.
    """
    by_day: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for c in calls:
        by_day[int(c.get("day", 0))].append(c)
    out = {}
    for day, items in sorted(by_day.items()):
        batch: dict[str, list[int]] = {}
        reads = errors = 0
        for c in items:
            tool = str(c.get("tool"))
            if not c.get("ok", True):
                errors += 1
            elif tool in MUTATION_TOOLS:
                res = c.get("result") or {}
                entry = batch.setdefault(tool, [0, 0, 0])
                entry[0] += 1
                entry[1] += int(res.get("n_accepted", 0) or 0)
                entry[2] += int(res.get("n_rejected", 0) or 0)
            elif tool != "end_day":
                reads += 1
        accepted = sum(v[1] for v in batch.values())
        rejected = sum(v[2] for v in batch.values())
        out[day] = DayActions(len(items), errors, accepted, rejected, _describe(batch, reads, errors))
    return out


@dataclass(frozen=True)
class Finding:
    """One failure-mode finding: the detector (`mode`), the day it points at and what was found."""

    mode: str
    day: int
    details: str


def findings(run: RunData, settings: EvalSettings | None = None) -> list[Finding]:
    """Every finding of the four failure-mode detectors, by mode (detector order) then day."""
    settings = (settings or EvalSettings()).model_copy(update={"max_examples": FINDINGS_CAP})
    out = []
    for mode, found in detect_failures(run, settings).items():
        for ex in found.examples:
            details = ", ".join(f"{k}={v}" for k, v in ex.items() if k != "day")
            out.append(Finding(mode, int(ex["day"]), details))
    return out


DAY_COLUMNS = [
    "day",
    "date",
    "actions",
    "calls",
    "accepted",
    "rejected",
    "units_sold",
    "revenue",
    "gross_profit",
    "purchase",
    "operating",
    "writeoffs",
    "net",
    "net_assets",
    "visits",
    "lost",
]


def day_table(run: RunData, found: list[Finding]) -> tuple[pd.DataFrame, dict[int, Counter[str]]]:
    """The day-by-day table (`DAY_COLUMNS`, one row per settled day) and the findings per day and mode.

    operating = warehouse rent + daily fee + visit fees + fines for expired units sold; writeoffs =
    expiry + discard write-offs; lost = units of demand the shelves could not serve (hidden log).
    """
    d = run.daily
    acts = day_actions(run.calls)
    lost = stockouts(run).set_index("day")["lost"]
    none = DayActions()
    out = pd.DataFrame(
        {
            "day": d["day"].astype("int64"),
            "date": d["date"].astype(str),
            "actions": [acts.get(int(x), none).text for x in d["day"]],
            "calls": [acts.get(int(x), none).calls for x in d["day"]],
            "accepted": [acts.get(int(x), none).accepted for x in d["day"]],
            "rejected": [acts.get(int(x), none).rejected for x in d["day"]],
            "units_sold": d["units_sold"].astype("int64"),
            "revenue": d["revenue"],
            "gross_profit": d["gross_profit"],
            "purchase": d["purchase"],
            "operating": (d["warehouse_rent"] + d["daily_fee"] + d["visit"] + d["expired_fine"]).round(2),
            "writeoffs": (d["expiry_writeoff"] + d["discard_writeoff"]).round(2),
            "net": d["net"],
            "net_assets": d["net_assets"],
            "visits": d["visits"].astype("int64"),
            "lost": [int(lost.get(int(x), 0)) for x in d["day"]],
        }
    )
    per_day: dict[int, Counter[str]] = defaultdict(Counter)
    for f in found:
        per_day[f.day][f.mode] += 1
    return out[DAY_COLUMNS], dict(per_day)

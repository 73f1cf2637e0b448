"""The metrics of a run (paper §4.1 and §5), each a pure function of a `RunData`.

Every docstring says what the metric is for and defines it exactly. Days are the settled days
1..T of the run; machine-days are all M x T pairs unless a window is named. Money is CNY. Expected
gross profit always means the world's demand model at the neutral shock (`economics`). A metric
that cannot be computed (too short a run, nothing on the shelves, no API cost) is None.
`compute_metrics` gathers them into one JSON-ready dict (the content of metrics.json).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from autovend.evaluation.assortment import (
    assortment_scores,
    mixes_on,
    reassignment_gap,
    reassignment_matrix,
)
from autovend.evaluation.failures import detect_failures, machine_gross_profit, visit_days
from autovend.evaluation.pricing import grid, search_prices
from autovend.evaluation.rundata import RunData
from autovend.evaluation.settings import EvalSettings

METRICS_VERSION = 1


def _num(x: Any, digits: int = 6) -> float | None:
    """A finite float rounded for JSON, or None."""
    if x is None:
        return None
    x = float(x)
    return round(x, digits) if math.isfinite(x) else None


def net_assets(run: RunData) -> dict[str, float]:
    """The primary outcome: cash plus unexpired inventory at cost at the close of the last day.

    final = net assets after day T (eq. (1)); growth = final - start cash.
    """
    final = run.final_net_assets
    return {"final": final, "start": run.start_cash, "growth": final - run.start_cash}


def waste_rate(run: RunData) -> float | None:
    """How much stock was lost rather than sold, as a share of the cost that left inventory.

    loss = expiry write-offs + early-disposal write-offs over the run (a unit's cost is written off
    once: when it expires, or when it is discarded unexpired; discarding expired units adds nothing);
    waste rate = loss / (cost of the unexpired units sold + loss). None when both are 0.
    """
    d = run.daily
    loss = float(d["expiry_writeoff"].sum() + d["discard_writeoff"].sum())
    base = float(d["cogs"].sum()) + loss
    return loss / base if base > 0 else None


def capital_efficiency(run: RunData) -> float | None:
    """Gross profit earned per unit of capital tied up in stock.

    mean over days of the day's gross profit / mean over days of the inventory value at cost (shelves,
    warehouse and in transit, unexpired units, at the close of each day). None when no stock was held.
    """
    d = run.daily
    inv = float(d["inventory_at_cost"].mean()) if len(d) else 0.0
    return float(d["gross_profit"].mean()) / inv if inv > 0 else None


def _unexpired_units(run: RunData) -> np.ndarray:
    """(T + 1, M) unexpired units on each shelf when demand was realised (hidden machine_days)."""
    devices = {str(x): i for i, x in enumerate(run.world.machines["device_id"])}
    out = np.zeros((run.days + 1, run.world.n_machines), dtype=np.int64)
    md = run.hidden["machine_days"]
    md = md[md["day"] <= run.days]
    m = md["device_id"].astype(str).map(devices).to_numpy(dtype=np.int64)
    out[md["day"].to_numpy(dtype=np.int64), m] = (md["units_before"] - md["expired_before"]).to_numpy(dtype=np.int64)
    return out


def shelf_utilization(run: RunData) -> dict[str, float | None]:
    """How much of the machines' capacity holds sellable stock, and how often a machine has none.

    utilization = mean over all machine-days of (unexpired units on the shelf before sales / capacity);
    empty_share = share of machine-days with no unexpired unit on the shelf before sales.
    """
    if run.days == 0:
        return {"utilization": None, "empty_share": None}
    units = _unexpired_units(run)[1:]
    cap = run.world.machines["capacity"].to_numpy(dtype=float)
    return {"utilization": float((units / cap).mean()), "empty_share": float((units == 0).mean())}


def tool_calls(run: RunData) -> dict[str, Any] | None:
    """How much the agent interacted: every tool invocation of the episode, end_day included.

    total = number of calls in the trajectory (failed calls included); errors = calls refused whole;
    per_day = total / T; by_tool = counts per tool. Taken from run.json's counters when the folder has
    no trajectory; None when neither exists.
    """
    if run.calls:
        by_tool: dict[str, int] = {}
        for c in run.calls:
            by_tool[str(c.get("tool"))] = by_tool.get(str(c.get("tool")), 0) + 1
        total, errors = len(run.calls), sum(1 for c in run.calls if not c.get("ok", True))
    elif run.meta.get("tool_calls"):
        counters = run.meta["tool_calls"]
        total, errors, by_tool = (
            int(counters.get("seq", 0)),
            int(counters.get("errors", 0)),
            counters.get("by_tool", {}),
        )
    else:
        return None
    per_day = total / run.days if run.days else None
    return {"total": total, "errors": errors, "per_day": per_day, "by_tool": dict(sorted(by_tool.items()))}


def api_efficiency(run: RunData) -> float | None:
    """Returns per dollar of inference: net-asset growth (final - start cash) per USD of API cost.

    None when run.json carries no positive `api_cost_usd` (e.g. the rule-based baseline).
    """
    cost = run.meta.get("api_cost_usd")
    if cost is None or not float(cost) > 0:
        return None
    return (run.final_net_assets - run.start_cash) / float(cost)


def checkpoints(run: RunData, settings: EvalSettings) -> list[int]:
    """Checkpoint days: every `checkpoint_every` days up to T (30, 60, ..., 180 by default)."""
    return list(range(settings.checkpoint_every, run.days + 1, settings.checkpoint_every))


def _window(day: int, settings: EvalSettings) -> tuple[int, int]:
    return max(1, day - settings.env_window_days + 1), day


def assortment(run: RunData, settings: EvalSettings) -> dict[str, Any]:
    """Quality of the product mix each machine carries, apart from how it was priced and stocked.

    At each checkpoint day c and machine m, the agent's mix is the set of products with a unit on m's
    shelf on day c. Its value is the expected gross profit of that mix on the standard display
    (`assortment.display_units` units of each product, reference prices, m's mean environment over
    the `env_window_days` days ending at c, neutral shock); the reference is the heuristic mix of as
    many products (`assortment.reference_mix`) valued the same way. score(c, m) = value / reference;
    the metric is the mean over checkpoints and machines with a non-empty shelf (None if there are none).
    """
    econ, panel = run.economics, run.panel
    per_day, scores = [], []
    for c in checkpoints(run, settings):
        score, _, _ = assortment_scores(econ, mixes_on(panel, c, run.world.n_machines), _window(c, settings))
        ok = np.isfinite(score)
        scores.extend(score[ok].tolist())
        per_day.append({"day": c, "score": _num(score[ok].mean()) if ok.any() else None, "machines": int(ok.sum())})
    return {"score": float(np.mean(scores)) if scores else None, "checkpoints": per_day}


def site_coordination(run: RunData, settings: EvalSettings) -> dict[str, Any]:
    """Whether each mix sits at the site where it earns most (paper §5.3), for the mixes the agent has.

    At each checkpoint c, V[i, j] = value of machine j's mix on the standard display at machine i (as
    in `assortment`, with machine i's capacity and environment). The actual assignment earns the
    trace of V; the best reassignment of the existing mixes across machines earns the optimal
    assignment (`scipy.optimize.linear_sum_assignment`). gap(c) = (best - actual) / best; the
    metric is the mean over checkpoints with best > 0.
    """
    econ, panel = run.economics, run.panel
    per_day, gaps = [], []
    for c in checkpoints(run, settings):
        V = reassignment_matrix(econ, mixes_on(panel, c, run.world.n_machines), _window(c, settings))
        gap, actual, best = reassignment_gap(V)
        if math.isfinite(gap):
            gaps.append(gap)
        per_day.append({"day": c, "gap": _num(gap), "actual": _num(actual, 4), "best": _num(best, 4)})
    return {"reassignment_gap": float(np.mean(gaps)) if gaps else None, "checkpoints": per_day}


def pricing_regret(run: RunData, settings: EvalSettings) -> dict[str, Any]:
    """Expected gross profit given up by the prices chosen, everything else as the agent left it.

    On the sampled machine-days ((day + machine index) % pricing_stride == 0, machines with a unit on
    the shelf), the shelf, site and the day's environment are fixed and the prices in force are
    compared with a price search over the price band (`pricing.search_prices`, grid step
    `price_grid_step` x reference price): regret = searched expected gross profit - expected gross
    profit at the agent's prices (>= 0). The metric is the mean over the sampled machine-days, CNY
    per machine per day.
    """
    panel, econ = run.panel, run.economics
    T, M = run.days, run.world.n_machines
    grid_d, grid_m = np.meshgrid(np.arange(1, T + 1), np.arange(M), indexing="ij")
    dd, mm = grid_d.ravel(), grid_m.ravel()
    keep = ((dd + mm) % settings.pricing_stride == 0) & (panel.units[dd, mm] > 0)
    dd, mm = dd[keep], mm[keep]
    if len(dd) == 0:
        return {"regret": None, "machine_days": 0}
    product, q, price = panel.padded(dd, mm)
    levels = grid(run.world.economics.price_band, settings.price_grid_step)
    res = search_prices(econ, mm, product, q, price, econ.env(dd, mm, product), levels, settings.pricing_max_rounds)
    return {
        "regret": float(res.regret.mean()),
        "machine_days": len(dd),
        "expected_gp_agent": float(res.agent.mean()),
        "expected_gp_reference": float(res.reference.mean()),
        "expected_gp_best_level": float(res.best_level.mean()),
        "mean_best_level": float(res.level.mean()),
    }


def physical_execution(run: RunData, settings: EvalSettings) -> dict[str, Any]:
    """Whether visits keep the shelves available and pay for themselves (paper §5.4).

    availability = share of machine-days from `execution_from_day` to T with an unexpired unit on the
    shelf before sales. A visit cycle of a machine runs from one visit day v1 to its next visit day v2
    (v1 >= execution_from_day; the last, incomplete cycle is left out); its return is (gross profit of
    the machine on days v1 .. v2 - 1 - one visit fee) / (v2 - v1). cycle_return = the sum of the
    cycles' numerators over the sum of their lengths (CNY per machine per cycle-day); costs other
    than visit fees are left out.
    """
    first = settings.execution_from_day
    if run.days < first:
        return {"availability": None, "cycle_return": None, "cycles": 0}
    units = _unexpired_units(run)[first:]
    fee = float(run.world.economics.visit_fee)
    cum = np.cumsum(machine_gross_profit(run), axis=0)
    total, length, n, gp_sum = 0.0, 0, 0, 0.0
    for m, days in enumerate(visit_days(run)):
        days = days[days >= first]
        if len(days) < 2:
            continue
        gp = cum[days[1:] - 1, m] - cum[days[:-1] - 1, m]
        gp_sum += float(gp.sum())
        total += float(gp.sum()) - fee * len(gp)
        length += int((days[1:] - days[:-1]).sum())
        n += len(gp)
    return {
        "availability": float((units > 0).mean()),
        "cycle_return": total / length if length else None,
        "cycles": n,
        "mean_cycle_days": length / n if n else None,
        "cycle_gross_profit_per_day": gp_sum / length if length else None,
    }


def _period(run: RunData, first: int, last: int) -> dict[str, float] | None:
    """Per-day outcomes of days first..last (None unless the run covers them)."""
    if run.days < last:
        return None
    d = run.daily.set_index("day")
    before = run.start_cash if first == 1 else float(d.at[first - 1, "net_assets"])
    part = d.loc[first:last]
    n = last - first + 1
    gp = float(part["gross_profit"].sum()) / n
    net = float(part["net"].sum()) / n
    return {
        "asset_growth": (float(d.at[last, "net_assets"]) - before) / n,
        "gross_profit": gp,
        "costs": gp - net,
        "visits": float(part["visits"].sum()) / n,
    }


def feedback(run: RunData, settings: EvalSettings) -> dict[str, Any]:
    """Whether operations improve as feedback accumulates (paper §5.5): early against late period.

    For each window (days 16-45 and 136-165 by default): asset_growth = (net assets at the close of
    the window's last day - at the close of the day before its first) / its length; gross_profit and
    costs (everything that lowered net assets besides the cost of goods: rent, fees, visits, fines,
    write-offs) per day; visits per day. change = late - early asset growth.
    """
    early = _period(run, *settings.early_window)
    late = _period(run, *settings.late_window)
    change = late["asset_growth"] - early["asset_growth"] if early and late else None
    return {"early": early, "late": late, "change": change}


def totals(run: RunData) -> dict[str, float]:
    """Sums of the daily ledger (money in CNY): revenue, gross profit, costs by kind, write-offs, visits."""
    d = run.daily
    cols = ["revenue", "gross_profit", "units_sold", "purchase", "warehouse_rent", "daily_fee", "visit"]
    cols += ["expired_fine", "expiry_writeoff", "discard_writeoff", "visits"]
    return {c: float(d[c].sum()) for c in cols}


def _clean(x: Any) -> Any:
    """Floats rounded and NaN turned into None, recursively."""
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_clean(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return _num(x)
    if isinstance(x, np.integer):
        return int(x)
    return x


def compute_metrics(run: RunData, settings: EvalSettings | None = None) -> dict[str, Any]:
    """Every metric of a run as one JSON-ready dict (the content of metrics.json).

    Top level: the headline numbers (net_assets, assortment, waste_rate, pricing_regret,
    shelf_utilization, empty_share, capital_efficiency, tool_calls, api_efficiency,
    reassignment_gap, availability, cycle_return, asset_growth_early/late) and failure counts;
    `details` holds each metric's breakdown and `failures` the detectors' examples.
    """
    settings = settings or EvalSettings()
    na = net_assets(run)
    shelf = shelf_utilization(run)
    calls = tool_calls(run)
    assort = assortment(run, settings)
    coord = site_coordination(run, settings)
    price = pricing_regret(run, settings)
    execution = physical_execution(run, settings)
    fb = feedback(run, settings)
    failures = {name: f.to_dict() for name, f in detect_failures(run, settings).items()}
    out = {
        "metrics_version": METRICS_VERSION,
        "run": {
            "name": run.name,
            "agent": run.agent,
            "seed": run.seed,
            "world": run.world.name,
            "world_hash": run.world_hash,  # run.json's: a world built in memory has its content hash
            "days": run.days,
            "horizon_days": run.world.horizon_days,
        },
        "net_assets": na["final"],
        "net_asset_growth": na["growth"],
        "assortment": assort["score"],
        "waste_rate": waste_rate(run),
        "pricing_regret": price["regret"],
        "shelf_utilization": shelf["utilization"],
        "empty_share": shelf["empty_share"],
        "capital_efficiency": capital_efficiency(run),
        "tool_calls": calls["total"] if calls else None,
        "api_efficiency": api_efficiency(run),
        "reassignment_gap": coord["reassignment_gap"],
        "availability": execution["availability"],
        "cycle_return": execution["cycle_return"],
        "asset_growth_early": fb["early"]["asset_growth"] if fb["early"] else None,
        "asset_growth_late": fb["late"]["asset_growth"] if fb["late"] else None,
        "failure_counts": {name: f["count"] for name, f in failures.items()},
        "details": {
            "net_assets": na,
            "assortment": assort,
            "site_coordination": coord,
            "pricing": price,
            "physical_execution": execution,
            "feedback": fb,
            "tool_calls": calls,
            "totals": totals(run),
            "settings": settings.model_dump(mode="json"),
        },
        "failures": failures,
    }
    return _clean(out)

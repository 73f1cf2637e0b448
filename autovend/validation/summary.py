"""The validation's outputs from its scored forecasts: metrics (numbers only), the verdict, provenance, tables.

`metrics.json` holds numbers only (so `dvc metrics show/diff` stays readable): the model's metrics with
their intervals, each reference's, control's, variant's and estimator's metrics, the spread over replay
seeds, the level rule and counts. `verdict.json` holds the verdict and every comparison; `provenance.json`
the window's dates, hashes, the shelf rule, notes and why a metric was not computed.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from autovend.calibration.estimates import Estimates
from autovend.calibration.result import CalibrationResult
from autovend.marks import counted
from autovend.validation.bootstrap import METRICS, MIN_MACHINES, Comparison, Scorer, machine_stats, metric_values
from autovend.validation.controls import CONTROLS
from autovend.validation.grid import EvalGrid, Forecast
from autovend.validation.level import LevelChoice
from autovend.validation.metrics import spread
from autovend.validation.verdict import REFERENCES, Shelves, comparisons, verdict_payload
from autovend.validation.weeks import MIN_WEEKS, WeekBootstrap

SHELF_RULES = {
    "inventory": "simulated from the operator's decisions: each machine's shelf on the window's first morning from "
    "training records, set to the counts of each visit in the window and depleted in between by the model's own "
    "simulated sales (the window's sales are never read; the paper reconstructed the shelves with them, kept as "
    "the `paper_protocol` variant)",
    "pre_window": "for a source without inventory records, each product's chance of being on the machine's shelf on "
    "each window day as the latent-availability chains forecast it from the training records, each pair and machine "
    "at the level of its training sales; in a source with inventory records, the sales rule's assortment of the "
    "last {weeks} training weeks; the window's sales are never read",
    "mixed": "inventory machines simulated from their visits and counts; sales-only machines on the sales rule's "
    "assortment of the last {weeks} training weeks (as for pre-window shelves)",
}
LEVEL_SHIFT = 1.25  # a machine's recent level this far above (or below 1 / this) its long-run level counts as moved


@dataclass(frozen=True)
class ValidationResult:
    """The validation's outputs; `replay_seconds` (the main replay's wall time) is kept out of every file."""

    metrics: dict[str, Any]
    verdict: dict[str, Any]
    provenance: dict[str, Any]
    weekly: pd.DataFrame
    subcategory: pd.DataFrame
    scores: pd.DataFrame
    comparisons: pd.DataFrame
    backtest: pd.DataFrame
    calibration: CalibrationResult
    notes: list[str] = field(default_factory=list)
    replay_seconds: float = 0.0
    forecasts: dict[str, Forecast] = field(default_factory=dict)  # every forecast on `grid` (not written)
    grid: EvalGrid | None = None


@dataclass(frozen=True)
class EstimatorRun:
    """Another estimator's training calibration (None: it could not calibrate) and its forecast."""

    estimates: Estimates | None
    forecast: Forecast | None


def estimator_scalars(estimates: Estimates | None) -> dict[str, float]:
    """The estimates the metrics report of an estimator's calibration (NaN each when it could not calibrate)."""
    if estimates is None:
        return dict.fromkeys(("u", "x", "e", "r", "sigma"), math.nan)
    e = estimates
    return {"u": e.u, "x": e.x, "e": e.e, "r": e.r, "sigma": e.sigma}


def _seed_spread(grid: EvalGrid, f: Forecast) -> dict[str, dict[str, float]]:
    """Mean, sd, p05 and p95 over the replay seeds of each metric of one seed's sales."""
    assert f.mw_seeds is not None and f.pair_seeds is not None
    ones = np.ones((1, grid.n_machines), dtype=np.int64)
    per_seed: dict[str, list[float]] = {k: [] for k in METRICS if k != "crps"}
    for s in range(f.n_seeds):
        one = Forecast(f.name, f.mw_seeds[s], f.pair_seeds[s])
        vals = metric_values(grid, machine_stats(grid, one), ones)
        for k in per_seed:
            per_seed[k].append(float(vals[k][0]))
    out = {}
    for k, seed_values in per_seed.items():
        sp = spread(seed_values)
        out[k] = {s: (getattr(sp, s) if sp is not None else float("nan")) for s in ("mean", "sd", "p05", "p95")}
    return out


def _level_metrics(level: LevelChoice | None, grid: EvalGrid, train_md: pd.DataFrame, weeks: int) -> dict[str, float]:
    """The level rule and, after the fact, how the window's level compares with the training period's."""
    md = train_md[train_md["m"].isin(grid.machines)]
    end = int(md["d"].max()) + 1 if len(md) else 0
    long_run = md.groupby("m")["units"].mean().reindex(grid.machines).fillna(0.0).to_numpy()
    recent_md = md[md["d"] >= end - 7 * weeks]
    recent = recent_md.groupby("m")["units"].sum().reindex(grid.machines).fillna(0.0).to_numpy() / (7 * weeks)
    realised = grid.real_mw.sum()
    out = {
        "window_vs_training": realised / (long_run.sum() * grid.n_days) if long_run.sum() > 0 else math.nan,
        "window_vs_recent": realised / (recent.sum() * grid.n_days) if recent.sum() > 0 else math.nan,
    }
    if level is not None:
        out.update(
            weeks=float(level.weeks),
            alpha=level.alpha,
            network_ratio=level.network_ratio,
            machines_up=float((level.ratio >= LEVEL_SHIFT).sum()),
            machines_down=float((level.ratio <= 1 / LEVEL_SHIFT).sum()),
        )
    return out


def _reasons(metrics: dict[str, Any], n_machines: int, weeks: WeekBootstrap | None = None) -> dict[str, str]:
    """Why each NaN in the metrics is missing, by dotted key (`weeks`: the scorer's week bootstrap, if any)."""
    why = {
        "spearman": "no machine with at least 5 products on its window shelves whose realised and forecast sales "
        "both vary",
        "tvd": "no realised or no forecast sales",
    }
    few = f"intervals need at least {MIN_MACHINES} machines; {n_machines} evaluated"
    if weeks is not None:
        few = (
            f"intervals need at least {MIN_MACHINES} machines (a machine-cluster bootstrap) or {MIN_WEEKS} test weeks "
            f"(a block bootstrap over weeks); {counted(n_machines, 'machine')} and {counted(weeks.n_weeks, 'week')} "
            "evaluated"
        )
    no_interval = n_machines < MIN_MACHINES and (weeks is None or not weeks.usable)
    out: dict[str, str] = {}

    def visit(path: list[str], d: dict[str, Any]) -> None:
        for key, value in d.items():
            if isinstance(value, dict):
                visit([*path, key], value)
            elif isinstance(value, float) and math.isnan(value):
                parts = [*path, key]
                if key in ("low", "high") and no_interval:
                    reason = few
                else:
                    reason = next((why[p] for p in reversed(parts) if p in why), "not computed on this test window")
                out[".".join(parts)] = reason

    visit([], metrics)
    return out


def summarise(
    scorer: Scorer,
    forecasts: dict[str, Forecast],
    variants: dict[str, Forecast],
    by_estimator: dict[str, EstimatorRun],
    cal: CalibrationResult,
    shelves: Shelves,
    level: LevelChoice | None,
    notes: list[str],
    info: dict[str, Any],
    replay_seconds: float,
) -> ValidationResult:
    """Score every forecast and assemble the outputs (module docstring)."""
    grid, config = scorer.grid, info["config"]
    scored = {name: scorer.add(f) for name, f in {**forecasts, **variants}.items()}
    est_scores = {n: scorer.add(e.forecast) for n, e in by_estimator.items() if e.forecast is not None}
    model = scored["model"]
    comps = comparisons(scorer, "model", (*REFERENCES, *CONTROLS))
    metrics: dict[str, Any] = {k: model[k].value for k in METRICS}
    metrics["intervals"] = {k: {"low": model[k].ci_low, "high": model[k].ci_high} for k in METRICS}
    for name in REFERENCES:
        metrics[name] = {k: scored[name][k].value for k in METRICS}
    metrics["controls"] = {name: {k: scored[name][k].value for k in METRICS} for name in CONTROLS}
    metrics["variants"] = {name: {k: scored[name][k].value for k in METRICS} for name in variants}
    metrics["estimators"] = {
        "structural": {
            **{k: model[k].value for k in METRICS},
            **estimator_scalars(cal.estimates),
        }
    }
    for name, e in by_estimator.items():
        vals = (
            {k: est_scores[name][k].value for k in METRICS} if name in est_scores else dict.fromkeys(METRICS, math.nan)
        )
        metrics["estimators"][name] = {**vals, **estimator_scalars(e.estimates)}
    metrics["seed_spread"] = _seed_spread(grid, forecasts["model"])
    metrics["level"] = _level_metrics(level, grid, info["train_md"], config.persistence_weeks)
    est = cal.estimates
    metrics["train"] = {"u": est.u, "x": est.x, "e": est.e, "r": est.r, "rho": est.rho, "sigma": est.sigma}
    metrics.update(
        n_machines=grid.n_machines,
        n_machines_inventory=info["n_machines_inventory"],
        n_machines_pre_window=info["n_machines_pre_window"],
        n_machine_weeks=int(grid.real_mw.size),
        n_pairs=len(grid.pair_key),
        test_weeks=config.test_weeks,
        seeds=config.seeds,
        bootstrap=config.bootstrap,
        units_realised=float(grid.real_mw.sum()),
        units_simulated=float(forecasts["model"].mw.sum()),
        assortment_coverage=info["assortment_coverage"],
    )
    verdict = verdict_payload(comps, shelves, grid.n_machines, config.bootstrap, scorer.weeks)
    provenance = {
        "test_start": info["test_start"],
        "test_end": info["test_end"],
        "shelves": shelves,
        "shelf_rule": SHELF_RULES[shelves].format(weeks=config.shelf_weeks),
        "u_source": est.u_source or "",
        "source_hash": info["source_hash"],
        "code_version": info["code_version"],
        "not_computed": _reasons(metrics, grid.n_machines, scorer.weeks),
        "notes": notes,
    }
    return ValidationResult(
        metrics=metrics,
        verdict=verdict,
        provenance=provenance,
        weekly=_weekly(grid, forecasts, info["machine_ids"]),
        subcategory=_subcategory(grid, forecasts, info["g2_names"]),
        scores=_scores_table(scored, est_scores),
        comparisons=_comparisons_table(comps, scorer.weeks),
        backtest=level.backtest if level is not None else pd.DataFrame(columns=["weeks", "alpha", "wape"]),
        calibration=cal,
        notes=notes,
        replay_seconds=replay_seconds,
        forecasts={**forecasts, **variants},
        grid=grid,
    )


def _comparisons_table(comps: list[Comparison], weeks: WeekBootstrap | None) -> pd.DataFrame:
    """plots/comparisons.csv: every comparison.

    With a week bootstrap it gains a column `resampled` = "weeks" (the figure's title then names it); the
    machine-cluster table is as it always was.
    """
    table = pd.DataFrame([asdict(c) for c in comps])
    if weeks is not None and weeks.usable:
        table["resampled"] = "weeks"
    return table


def _kind(name: str) -> str:
    if name == "model":
        return "model"
    if name in REFERENCES:
        return "reference"
    if name in CONTROLS:
        return "control"
    return "variant"


def _scores_table(scored: dict[str, Any], est: dict[str, Any]) -> pd.DataFrame:
    rows = []
    for group in (scored, {f"estimator_{k}": v for k, v in est.items()}):
        for name, scores in group.items():
            kind = "estimator" if name.startswith("estimator_") else _kind(name)
            for metric, s in scores.items():
                rows.append(
                    {
                        "variant": name,
                        "kind": kind,
                        "metric": metric,
                        "value": s.value,
                        "ci_low": s.ci_low,
                        "ci_high": s.ci_high,
                    }
                )
    return pd.DataFrame(rows)


def _weekly(grid: EvalGrid, forecasts: dict[str, Forecast], ids: np.ndarray) -> pd.DataFrame:
    model = forecasts["model"]
    assert model.mw_seeds is not None
    return pd.DataFrame(
        {
            "machine_id": np.repeat(ids, grid.n_weeks),
            "week": np.tile(np.arange(grid.n_weeks), grid.n_machines) + 1,
            "realised": grid.real_mw.ravel(),
            "simulated": model.mw.ravel(),
            "simulated_p05": np.percentile(model.mw_seeds, 5, axis=0).ravel(),
            "simulated_p95": np.percentile(model.mw_seeds, 95, axis=0).ravel(),
            "persistence": forecasts["persistence"].mw.ravel(),
            "naive": forecasts["naive"].mw.ravel(),
        }
    )


def _shares(weights: np.ndarray) -> np.ndarray:
    total = weights.sum(axis=-1, keepdims=True)
    return np.divide(weights, total, out=np.full(weights.shape, np.nan), where=total > 0)


def _subcategory(grid: EvalGrid, forecasts: dict[str, Forecast], names: list[str]) -> pd.DataFrame:
    g = grid.pair_g2

    def by_g2(pair: np.ndarray) -> np.ndarray:
        return np.bincount(g, weights=pair, minlength=grid.n_g2)

    model = forecasts["model"]
    assert model.pair_seeds is not None
    per_seed = _shares(np.stack([by_g2(p) for p in model.pair_seeds]))
    ok = np.isfinite(per_seed[:, 0]) if grid.n_g2 else np.zeros(0, dtype=bool)
    return pd.DataFrame(
        {
            "category_l2": names,
            "realised_share": _shares(by_g2(grid.real_pair)),
            "simulated_share": _shares(by_g2(model.pair)),
            "simulated_share_sd": per_seed[ok].std(axis=0) if ok.any() else np.nan,
            "persistence_share": _shares(by_g2(forecasts["persistence"].pair)),
            "naive_share": _shares(by_g2(forecasts["naive"].pair)),
        }
    )

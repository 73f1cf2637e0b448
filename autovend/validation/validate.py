"""Held-out validation (§3.3): re-estimate on the records before the test window, replay its shelves, score.

Split: the last `test_weeks` weeks of the records are the test window; every data-derived parameter is
re-estimated by `autovend.calibration.calibrate` on the records before it (`until` = the window's first
day). Evaluable machines: those with known shelves in the window (inventory records) and at least
`min_machine_days` training days; for a source without inventory records, every machine with training
days, on its sales-rule shelves.

References, on the same machine-weeks: persistence (each machine's mean weekly sales over the
`persistence_weeks` weeks before the window) and naive (each machine's mean daily sales over its whole
training period, spread uniformly over the products on its shelf each day: it gives machine-week and
subcategory predictions). Ablations: without the shock (xi = 1), and with uniform product popularity
(omega equal within the catalog; each machine-day's expected total kept, so only the product split
changes). Estimators: the training window is also calibrated with every estimator of
`autovend.calibration.estimator` (structural, the default, and the paper's definitions) and each is
scored on the same held-out shelves and seeds (`estimators` in the metrics).

The metrics say whether the model beats each reference (`references`: a boolean and a sentence per
comparison, `beats_all_references`), and why a metric was not computed (`not_computed`: NaN in memory,
null in metrics.json), e.g. no machine with enough products for the within-machine Spearman.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from autovend import __version__
from autovend.calibration.calibrate import calibrate
from autovend.calibration.config import CalibrationConfig
from autovend.calibration.estimator import DEFAULT_ESTIMATOR, ESTIMATORS, check_estimator
from autovend.calibration.identification import Identification
from autovend.calibration.panel import Panel, build_panel
from autovend.calibration.result import CalibrationResult
from autovend.data.load import Source
from autovend.demand.model import DemandModel, ShockProcess
from autovend.demand.settings import DemandSettings
from autovend.errors import CalibrationError, InsufficientDataError, NonFiniteError
from autovend.validation.config import ValidationConfig
from autovend.validation.metrics import (
    SPEARMAN_MIN_ITEMS,
    beats,
    median_within_spearman,
    spread,
    tvd,
    volume_error,
    wape,
)
from autovend.validation.replay import ReplayResult, WindowShelves, expected_rates, replay, window_shelves


@dataclass(frozen=True)
class ValidationResult:
    """Metrics (metrics.json), plot data (CSV tables) and the training calibration.

    `replay_seconds` (the wall time of the main replay) measures the machine, not the model: it is kept
    out of `metrics` and out of the written report, so the report changes only when the numbers do.
    """

    metrics: dict[str, Any]
    weekly: pd.DataFrame
    subcategory: pd.DataFrame
    ablation: pd.DataFrame
    calibration: CalibrationResult
    notes: list[str] = field(default_factory=list)
    replay_seconds: float = 0.0


def _scores(shelves: WindowShelves, rep: ReplayResult, g2: np.ndarray, n_g2: int, n_weeks: int) -> dict[str, Any]:
    """Point scores of the seed-mean prediction and the spread of the per-seed scores."""
    machines = shelves.machines
    m_pos = pd.Series(np.arange(len(machines)), index=machines).reindex(shelves.m).to_numpy()
    mw_idx = m_pos * n_weeks + shelves.d // 7
    real_mw = np.bincount(mw_idx, weights=shelves.sales, minlength=len(machines) * n_weeks)
    sim_mw = rep.machine_week.reshape(rep.machine_week.shape[0], -1)
    real_g2 = np.bincount(g2[shelves.k], weights=shelves.sales, minlength=n_g2)
    real_pairs = np.bincount(rep.pairs, weights=shelves.sales, minlength=rep.product_machine.shape[1])
    pair_machine = np.zeros(rep.product_machine.shape[1], dtype=np.int64)
    pair_machine[rep.pairs] = shelves.m
    spear, _ = median_within_spearman(pair_machine, real_pairs, rep.product_machine.mean(axis=0))
    per_seed = {
        "volume_error": [volume_error(shelves.sales.sum(), s.sum()) for s in sim_mw],
        "wape": [wape(real_mw, s) for s in sim_mw],
        "tvd": [tvd(real_g2, s) for s in rep.subcategory],
        "spearman_median": [median_within_spearman(pair_machine, real_pairs, s)[0] for s in rep.product_machine],
    }
    out: dict[str, Any] = {
        "volume_error": volume_error(shelves.sales.sum(), sim_mw.mean(axis=0).sum()),
        "wape": wape(real_mw, sim_mw.mean(axis=0)),
        "tvd": tvd(real_g2, rep.subcategory.mean(axis=0)),
        "spearman_median": spear,
    }
    for key, vals in per_seed.items():
        sp = spread(vals)  # over the seeds where the metric was computed
        for stat in ("mean", "sd", "p05", "p95"):
            out[f"{key}_seed_{stat}"] = getattr(sp, stat) if sp is not None else float("nan")
    return out


# (name, model metric, reference metric (a path into the metrics), what is compared, the reference)
REFERENCE_COMPARISONS = (
    ("wape_vs_persistence", ("wape",), ("wape_persistence",), "machine-week WAPE", "the persistence reference"),
    ("wape_vs_naive", ("wape",), ("wape_naive",), "machine-week WAPE", "the naive reference"),
    ("tvd_vs_naive", ("tvd",), ("tvd_naive",), "subcategory TVD", "the naive reference"),
    (
        "tvd_vs_uniform_popularity",
        ("tvd",),
        ("ablation_uniform_popularity", "tvd"),
        "subcategory TVD",
        "uniform popularity (the ablation)",
    ),
)


def _at(metrics: dict[str, Any], path: tuple[str, ...]) -> float:
    value: Any = metrics
    for key in path:
        value = value[key]
    return float(value) if value is not None else float("nan")


def compare_with_references(metrics: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per comparison: whether the model's error is below the reference's (None: not compared) and a sentence."""
    out = {}
    for name, model_key, ref_key, what, ref in REFERENCE_COMPARISONS:
        model, reference = _at(metrics, model_key), _at(metrics, ref_key)
        beaten = beats(model, reference)
        if beaten is None:
            missing = ".".join(model_key if not math.isfinite(model) else ref_key)
            text = f"The {what} was not compared with {ref}: {missing} was not computed."
        elif beaten:
            text = f"The model's {what} ({model:.3f}) beats {ref} ({reference:.3f})."
        elif model == reference:
            text = f"The model's {what} ties with {ref} ({model:.3f}): it does not beat it."
        else:
            text = f"The model's {what} ({model:.3f}) does not beat {ref} ({reference:.3f})."
        out[name] = {"model_beats_reference": beaten, "summary": text}
    return out


def _not_computed(metrics: dict[str, Any], realised: float, simulated: float, naive: float) -> dict[str, str]:
    """Why each NaN metric is missing, keyed by metric (per-seed spreads under their metric's key)."""
    no_sales = "no realised sales on the evaluated machines in the test window"
    reasons = {
        "spearman_median": f"no machine with at least {SPEARMAN_MIN_ITEMS} products on its test-window shelves whose "
        "realised and simulated sales both vary",
        "volume_error": no_sales,
        "wape": no_sales,
        "wape_persistence": no_sales,
        "wape_naive": no_sales,
        "tvd": no_sales if realised <= 0 else "the replay simulated no sales" if simulated <= 0 else "",
        "tvd_naive": no_sales if realised <= 0 else "the naive reference predicts no sales" if naive <= 0 else "",
    }
    out: dict[str, str] = {}

    def visit(prefix: str, d: dict[str, Any]) -> None:
        for key, value in d.items():
            if isinstance(value, dict):
                visit(f"{prefix}{key}.", value)
            elif isinstance(value, float) and math.isnan(value):
                base = key.split("_seed_")[0]
                out.setdefault(prefix + base, reasons.get(base) or "not computed on this test window")

    visit("", metrics)
    return out


def _shares(weights: np.ndarray) -> np.ndarray:
    """Weights over their sum (NaN where the sum is 0: no share to speak of)."""
    total = weights.sum(axis=-1, keepdims=True)
    return np.divide(weights, total, out=np.full(weights.shape, np.nan), where=total > 0)


def _training_caveats(cal: CalibrationResult) -> list[str]:
    """Notes on the training calibration's scalars that are not plainly estimated (its identification record)."""
    raw = cal.scalars.get("identification")
    if not raw:
        return []
    ident = Identification.model_validate(raw)
    out = []
    for key in ("u", "e", "x", "r", "rho"):
        est = getattr(ident, key)
        if est.status != "estimated" or est.weak:
            out.append(f"training calibration: {key} is {est.status}{', weak' if est.weak else ''}: {est.reason}")
    return out


def _evaluable(panel: Panel, train_days: int, config: ValidationConfig) -> tuple[np.ndarray, bool]:
    md = panel.machine_days
    train_n = md[md["d"] < train_days].groupby("m").size()
    enough = train_n.index[train_n >= config.min_machine_days].to_numpy()
    has_inv = panel.machines["has_inventory"].to_numpy()
    if has_inv.any():
        known_test = md[(md["d"] >= train_days) & md["known"]]["m"].unique()
        return np.intersect1d(enough, known_test), True
    test = md[md["d"] >= train_days]["m"].unique()
    return np.intersect1d(enough, test), False


def _demand_model(cal: CalibrationResult, full: Panel, settings: DemandSettings) -> DemandModel:
    """The demand model of a training calibration, in the full panel's machine and product order."""
    cm = cal.machines.set_index("machine_id")
    ids = full.machines["machine_id"].to_numpy()
    skus = full.products["sku_id"].to_numpy()
    b = cal.base_attraction(list(cm.index)).reindex(index=ids, columns=skus).fillna(0.0).to_numpy()
    return DemandModel(
        b=b,
        U=cm["U"].reindex(ids).fillna(0.0).to_numpy(),
        capacity=full.machines["capacity"].to_numpy(dtype=float),
        site_types=tuple(full.machines["site_type"].astype(str)),
        categories=tuple(full.products["category_l1"].astype(str)),
        settings=settings,
        shock=ShockProcess(sigma=float(cal.scalars["sigma"]), rho=float(cal.scalars["rho"])),
    )


ESTIMATOR_SCORES = ("volume_error", "wape", "tvd", "spearman_median", "wape_seed_mean")
ESTIMATOR_SCALARS = ("u", "x", "e", "r", "sigma")


def validate(
    source: Source,
    cal_config: CalibrationConfig | None = None,
    config: ValidationConfig | None = None,
    settings: DemandSettings | None = None,
    estimators: tuple[str, ...] = ESTIMATORS,
) -> ValidationResult:
    """Run the held-out validation of a checked source (module docstring).

    The model, its ablations and the references use the default estimator's training calibration; every
    estimator in `estimators` is also scored on the same held-out shelves and seeds (`metrics["estimators"]`).
    """
    cal_config = cal_config or CalibrationConfig()
    config = config or ValidationConfig()
    settings = settings or DemandSettings()
    notes: list[str] = []
    full = build_panel(source, cal_config.model_copy(update={"until": None}))
    n_test = 7 * config.test_weeks
    if full.n_days < n_test + 28:
        raise InsufficientDataError(
            f"validation needs at least {n_test + 28} days of records ({config.test_weeks} test weeks plus 4 "
            f"training weeks); the source spans {full.n_days}"
        )
    train_days = full.n_days - n_test
    test_start: dt.date = full.days["date"].iat[train_days].date()
    cal = calibrate(source, cal_config.model_copy(update={"until": test_start}), settings)
    machines, known = _evaluable(full, train_days, config)
    if len(machines) == 0:
        raise InsufficientDataError("validation needs machines with records in both the training and the test window")
    if not known:
        notes.append("no inventory records: test-window shelves come from the sales rule (quantities unknown)")
    notes += _training_caveats(cal)

    # parameters of the training calibration, in the full panel's order
    ids = full.machines["machine_id"].to_numpy()
    skus = full.products["sku_id"].to_numpy()
    model = _demand_model(cal, full, settings)
    b = model.b
    shelves = window_shelves(full, settings, train_days, machines, float(cal.scalars["typical_fill"]))
    rates = expected_rates(shelves, model)
    g2_names = sorted(full.products["category_l2"].unique())
    g2 = pd.Series(np.arange(len(g2_names)), index=g2_names).reindex(full.products["category_l2"]).to_numpy()
    n_weeks = int(np.ceil(shelves.n_days / 7))
    common = {"seeds": config.seeds, "seed": config.seed, "g2": g2, "n_g2": len(g2_names)}
    full_rep = replay(shelves, rates, model.shock, **common)
    scores = _scores(shelves, full_rep, g2, len(g2_names), n_weeks)

    # ablations
    no_shock = _scores(shelves, replay(shelves, rates, model.shock, shock=False, **common), g2, len(g2_names), n_weeks)
    pop = cal.popularity.set_index("sku_id")
    uniform_b = b / np.where(pop["omega"].reindex(skus).to_numpy() > 0, pop["omega"].reindex(skus).to_numpy(), 1.0)
    rates_uni = expected_rates(shelves, model.with_b(uniform_b))
    key = shelves.m.astype(np.int64) * (shelves.n_days + 1) + shelves.d
    tot = pd.Series(rates).groupby(key).transform("sum").to_numpy()
    tot_uni = pd.Series(rates_uni).groupby(key).transform("sum").to_numpy()
    rates_uni = rates_uni * np.where(tot_uni > 0, tot / np.where(tot_uni > 0, tot_uni, 1.0), 0.0)
    uniform = _scores(shelves, replay(shelves, rates_uni, model.shock, **common), g2, len(g2_names), n_weeks)

    # each estimator's training calibration on the same held-out shelves and seeds
    by_estimator: dict[str, dict[str, Any]] = {}
    for name in estimators:
        if name == DEFAULT_ESTIMATOR:
            alt_cal, alt_scores = cal, scores
        else:
            try:
                alt_cal = calibrate(
                    source, cal_config.model_copy(update={"until": test_start}), settings, check_estimator(name)
                )
            except (InsufficientDataError, CalibrationError, NonFiniteError) as exc:
                notes.append(f"the {name} estimator could not calibrate the training window: {exc}")
                by_estimator[name] = {k: float("nan") for k in (*ESTIMATOR_SCORES, *ESTIMATOR_SCALARS)}
                continue
            alt_model = _demand_model(alt_cal, full, settings)
            alt_rep = replay(shelves, expected_rates(shelves, alt_model), alt_model.shock, **common)
            alt_scores = _scores(shelves, alt_rep, g2, len(g2_names), n_weeks)
        by_estimator[name] = {
            **{k: alt_scores[k] for k in ESTIMATOR_SCORES},
            **{k: alt_cal.scalars[k] for k in ESTIMATOR_SCALARS},
        }

    # references on the same machine-weeks
    md = full.machine_days
    m_pos = pd.Series(np.arange(len(machines)), index=machines)
    mw_idx = m_pos.reindex(shelves.m).to_numpy() * n_weeks + shelves.d // 7
    real_mw = np.bincount(mw_idx, weights=shelves.sales, minlength=len(machines) * n_weeks).reshape(
        len(machines), n_weeks
    )
    days_in_week = np.array([min(7, shelves.n_days - 7 * w) for w in range(n_weeks)], dtype=float)
    look = md[(md["d"] >= train_days - 7 * config.persistence_weeks) & (md["d"] < train_days)]
    persist_daily = look.groupby("m")["units"].sum().reindex(machines).fillna(0.0).to_numpy() / (
        7 * config.persistence_weeks
    )
    train_md = md[md["d"] < train_days]
    naive_daily = train_md.groupby("m")["units"].mean().reindex(machines).fillna(0.0).to_numpy()
    persistence_mw = persist_daily[:, None] * days_in_week[None, :]
    naive_mw = naive_daily[:, None] * days_in_week[None, :]
    n_on_shelf = pd.Series(1.0, index=key).groupby(key).transform("sum").to_numpy()
    naive_cell = naive_daily[m_pos.reindex(shelves.m).to_numpy()] / n_on_shelf
    real_g2 = np.bincount(g2[shelves.k], weights=shelves.sales, minlength=len(g2_names))
    naive_g2 = np.bincount(g2[shelves.k], weights=naive_cell, minlength=len(g2_names))

    metrics: dict[str, Any] = {
        **scores,
        "wape_persistence": wape(real_mw.ravel(), persistence_mw.ravel()),
        "wape_naive": wape(real_mw.ravel(), naive_mw.ravel()),
        "tvd_naive": tvd(real_g2, naive_g2),
        "ablation_no_shock": {
            k: no_shock[k] for k in ("volume_error", "wape", "tvd", "spearman_median", "wape_seed_mean")
        },
        "ablation_uniform_popularity": {
            k: uniform[k] for k in ("volume_error", "wape", "tvd", "spearman_median", "wape_seed_mean")
        },
        "estimators": by_estimator,
        "n_machines": int(len(machines)),
        "n_machine_weeks": int(real_mw.size),
        "shelves_known": bool(known),
        "test_start": str(test_start),
        "test_end": str(full.days["date"].iat[-1].date()),
        "test_weeks": config.test_weeks,
        "seeds": config.seeds,
        "units_realised": float(shelves.sales.sum()),
        "units_simulated": float(full_rep.mean_sales.sum()),
        "train": {k: cal.scalars[k] for k in ("u", "x", "e", "r", "rho", "sigma", "u_source")},
        "source_hash": full.source_hash,
        "code_version": __version__,
    }
    metrics["not_computed"] = _not_computed(
        metrics, float(shelves.sales.sum()), float(full_rep.mean_sales.sum()), float(naive_g2.sum())
    )
    metrics["references"] = compare_with_references(metrics)
    verdicts = [c["model_beats_reference"] for c in metrics["references"].values()]
    metrics["beats_all_references"] = None if None in verdicts else all(verdicts)
    weeks = np.tile(np.arange(n_weeks), len(machines))
    sim = full_rep.machine_week
    weekly = pd.DataFrame(
        {
            "machine_id": np.repeat(ids[machines], n_weeks),
            "week": weeks + 1,
            "realised": real_mw.ravel(),
            "simulated": sim.mean(axis=0).ravel(),
            "simulated_p05": np.percentile(sim, 5, axis=0).ravel(),
            "simulated_p95": np.percentile(sim, 95, axis=0).ravel(),
            "persistence": persistence_mw.ravel(),
            "naive": naive_mw.ravel(),
        }
    )
    sim_g2 = _shares(full_rep.subcategory)
    sim_ok = np.isfinite(sim_g2[:, 0]) if len(g2_names) else np.zeros(0, dtype=bool)  # seeds that sold something
    subcategory = pd.DataFrame(
        {
            "category_l2": g2_names,
            "realised_share": _shares(real_g2),
            "simulated_share": sim_g2[sim_ok].mean(axis=0) if sim_ok.any() else np.nan,
            "simulated_share_sd": sim_g2[sim_ok].std(axis=0) if sim_ok.any() else np.nan,
            "naive_share": _shares(naive_g2),
        }
    )
    rows = [("model", scores), ("no shock", no_shock), ("uniform popularity", uniform)]
    ablation = pd.DataFrame(
        [{"variant": n, **{k: s[k] for k in ("volume_error", "wape", "tvd", "spearman_median")}} for n, s in rows]
        + [
            {
                "variant": "persistence reference",
                "volume_error": np.nan,
                "wape": metrics["wape_persistence"],
                "tvd": np.nan,
                "spearman_median": np.nan,
            },
            {
                "variant": "naive reference",
                "volume_error": np.nan,
                "wape": metrics["wape_naive"],
                "tvd": metrics["tvd_naive"],
                "spearman_median": np.nan,
            },
        ]
    )
    return ValidationResult(
        metrics=metrics,
        weekly=weekly,
        subcategory=subcategory,
        ablation=ablation,
        calibration=cal,
        notes=notes,
        replay_seconds=float(full_rep.seconds),
    )

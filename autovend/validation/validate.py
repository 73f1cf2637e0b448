"""Held-out validation (§3.3): re-estimate on the records before the test window, forecast it, score.

Split: the last `test_weeks` weeks of the records are the test window; every data-derived parameter is
re-estimated by `autovend.calibration.calibrate` on the records before it (`until` = the window's first
day). A forecast of the window may use the inventory records and anything dated before the window, never
the window's sales (`autovend.validation.shelves`):

- machines with inventory records are replayed on their reconstructed shelves (the paper's protocol);
- sales-only machines on their pre-window assortment (`shelf_weeks`), only when the source has no
  evaluable inventory machine, or with `include_sales_only` (then the shelves are "mixed").

A machine is evaluated when it has `min_machine_days` training days and a forecast shelf (inventory: known
shelves in the window; sales-only: a non-empty pre-window assortment), so which machines are scored does
not depend on the window's sales either.

The model's level follows recent weeks when rolling-origin backtests inside the training period choose so
(`autovend.validation.level`). Everything is scored on one grid (`autovend.validation.grid`) with machine-
cluster bootstrap intervals (`autovend.validation.bootstrap`) against the paper's references (persistence,
naive) and the controls (`autovend.validation.controls`); the verdict is `autovend.validation.verdict`'s.
For sales-only machines the sales rule's shelves (built from the window's own sales) are replayed too, as
an upper bound that never enters the verdict. Each estimator of `autovend.calibration.estimator` is also
scored on the same shelves and seeds.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

from autovend import __version__
from autovend.calibration.calibrate import calibrate
from autovend.calibration.config import CalibrationConfig
from autovend.calibration.estimator import DEFAULT_ESTIMATOR, ESTIMATORS, check_estimator
from autovend.calibration.panel import Panel, build_panel
from autovend.calibration.result import CalibrationResult
from autovend.data.load import Source
from autovend.demand.model import DemandModel, ShockProcess
from autovend.demand.settings import DemandSettings
from autovend.distinct import distinct
from autovend.errors import CalibrationError, InsufficientDataError, NonFiniteError
from autovend.progress import step, stepped
from autovend.validation import controls as ctl
from autovend.validation.bootstrap import Scorer
from autovend.validation.config import ValidationConfig
from autovend.validation.grid import EvalGrid, Forecast, make_grid
from autovend.validation.level import choose_level
from autovend.validation.references import naive, persistence, persistence_pairs
from autovend.validation.replay import ReplaySettings, replay
from autovend.validation.shelves import WindowShelves, expected_rates, recorded_shelves, window_sales
from autovend.validation.stock import StockModel
from autovend.validation.summary import EstimatorRun, ValidationResult, summarise
from autovend.validation.verdict import REFERENCES
from autovend.validation.window import Outlook, Window, make_plan, window_shelves


def _training_caveats(cal: CalibrationResult) -> list[str]:
    """Notes on the training calibration's scalars that are not plainly estimated (its identification record)."""
    ident = cal.estimates.identification
    if ident is None:
        return []
    out = []
    for key in ("u", "e", "x", "r", "rho"):
        est = getattr(ident, key)
        if est.status != "estimated" or est.weak:
            out.append(f"training calibration: {key} is {est.status}{', weak' if est.weak else ''}: {est.reason}")
    return out


def demand_model(cal: CalibrationResult, full: Panel, settings: DemandSettings) -> DemandModel:
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
        shock=ShockProcess(sigma=cal.estimates.sigma, rho=cal.estimates.rho),
    )


# the steps of `validate` and their shares of its time (autovend.progress)
VALIDATION_STEPS = {
    "full panel": 0.6,
    "training calibration": 14.3,
    "training panel": 0.6,
    "shelves": 0.1,
    "level backtests": 0.1,
    "model replay": 1.4,
    "references": 0.1,
    "control replays": 5.5,
    "variant replays": 0.1,
    "other estimators": 16.0,
    "scores": 2.7,
}


@stepped("validation", VALIDATION_STEPS)
def validate(
    source: Source,
    cal_config: CalibrationConfig | None = None,
    config: ValidationConfig | None = None,
    settings: DemandSettings | None = None,
    estimators: tuple[str, ...] = ESTIMATORS,
) -> ValidationResult:
    """Run the held-out validation of a checked source (module docstring)."""
    cal_config = cal_config or CalibrationConfig()
    config = config or ValidationConfig()
    settings = settings or DemandSettings()
    step("full panel")
    full = build_panel(source, cal_config.model_copy(update={"until": None}))
    n_test = 7 * config.test_weeks
    if full.n_days < n_test + 28:
        raise InsufficientDataError(
            f"validation needs at least {n_test + 28} days of records ({config.test_weeks} test weeks plus 4 "
            f"training weeks); the source spans {full.n_days}"
        )
    train_days = full.n_days - n_test
    test_start: dt.date = full.days["date"].iat[train_days].date()
    until = cal_config.model_copy(update={"until": test_start})
    step("training calibration")
    cal = calibrate(source, until, settings)
    step("training panel")
    train = build_panel(source, until)
    if train.days["date"].iat[0] != full.days["date"].iat[0]:
        raise InsufficientDataError("the training panel must start on the records' first day")
    outlook = Outlook.of(cal, train, full, n_test, config)
    plan = make_plan(full, train_days, outlook.assortment["m"].unique(), config)
    if len(plan.machines) == 0:
        raise InsufficientDataError(
            "validation needs machines with enough training days and a shelf in the test window "
            "(inventory records, or sales in the last training weeks)"
        )
    notes = list(plan.notes) + _training_caveats(cal)
    if getattr(source.meta, "made_to_order", False):
        notes.append(
            "the source's products are made to order (source.yaml `made_to_order`): nothing runs out, so sales are "
            "demand and a shelf's depth plays no part; the forecast's stock is unlimited"
        )
    fill = cal.estimates.typical_fill
    step("shelves")
    pre, stock, shelves = window_shelves(full, plan, outlook, source.inventory, settings, train_days, fill)
    sales = window_sales(full, train_days, plan.machines)
    model = demand_model(cal, full, settings)
    g2_names = sorted(full.products["category_l2"].unique())
    g2 = pd.Series(np.arange(len(g2_names)), index=g2_names).reindex(full.products["category_l2"]).to_numpy()
    persist_pairs = persistence_pairs(full, train_days, plan.machines, config.persistence_weeks)
    paper = recorded_shelves(full, settings, train_days, plan.inventory, fill) if len(plan.inventory) else None
    extra = [persist_pairs[["m", "k"]].to_numpy()]
    if paper is not None:  # the paper protocol's shelf pairs (reconstructed with the window's sales) are scored too
        extra.append(np.column_stack([paper.m, paper.k]))
    stub = make_grid(plan.machines, sales, shelves, full.n_products, g2, len(g2_names))
    keys = tuple(stub.keys(e[:, 0], e[:, 1]) for e in extra if len(e))
    grid = make_grid(plan.machines, sales, shelves, full.n_products, g2, len(g2_names), extra_keys=keys)
    md = full.machine_days
    step("level backtests")
    level = (
        choose_level(md[md["d"] < train_days], plan.machines, train_days, n_test, config.seed)
        if config.level == "backtest"
        else None
    )
    run = Window(
        grid,
        pre,
        stock,
        outlook,
        model,
        level,
        ReplaySettings(config.seeds, config.seed),
        Scorer(grid, config.bootstrap, config.seed),
        fill,
    )
    step("model replay")
    rates = run.pre_rates(model)
    forecasts: dict[str, Forecast] = {"model": run.play("model", rates)}
    step("references")
    forecasts["persistence"] = persistence(grid, full, train_days, persist_pairs, config.persistence_weeks)
    forecasts["naive"] = naive(grid, full, train_days, shelves)
    step("control replays")
    forecasts.update(_controls(run, cal, full, rates, config.seed))
    step("variant replays")
    variants: dict[str, Forecast] = {}
    if level is not None and level.follows:
        variants["model_without_level"] = run.play("model_without_level", rates, level=False)
    if paper is not None:  # the paper's reconstruction: the counts less the window's own sales (never a verdict)
        both = WindowShelves.concat([p for p in (paper, pre) if len(p.m)])
        paper_rates = expected_rates(both, model) * np.where(np.isin(both.m, plan.pre_window), 0.0, 1.0)
        paper_rates[np.isin(both.m, plan.pre_window)] = rates
        mult = run.multiplier(both.m)
        f, _ = replay("paper_protocol", grid, both, paper_rates * mult, model.shock, run.replay)
        variants["paper_protocol"] = f
    if len(plan.pre_window):
        oracle = recorded_shelves(full, settings, train_days, plan.pre_window, fill)
        oracle_grid_ok = np.isin(grid.keys(oracle.m, oracle.k), grid.pair_key)
        if not oracle_grid_ok.all():  # the sales rule's shelf pairs all sold in the window, so they are on the grid
            raise ValueError("a sales-rule shelf pair is off the grid")
        oracle_rates = expected_rates(oracle, model)
        f, _ = replay("sales_rule_upper_bound", grid, oracle, oracle_rates, model.shock, run.replay)
        variants["sales_rule_upper_bound"] = f
    step("other estimators")
    by_estimator = _estimators(run, source, until, settings, full, estimators, notes)
    step("scores")
    return summarise(
        run.scorer,
        forecasts,
        variants,
        by_estimator,
        cal,
        plan.shelves,
        level,
        notes,
        info={
            "n_machines_inventory": len(plan.inventory),
            "n_machines_pre_window": len(plan.pre_window),
            "test_start": str(test_start),
            "test_end": str(full.days["date"].iat[-1].date()),
            "config": config,
            "source_hash": full.source_hash,
            "code_version": __version__,
            "train_md": md[md["d"] < train_days],
            "assortment_coverage": _coverage(grid, shelves),
            "machine_ids": full.machines["machine_id"].to_numpy()[grid.machines],
            "g2_names": g2_names,
        },
        replay_seconds=run.seconds,
    )


def _coverage(grid: EvalGrid, shelves: WindowShelves) -> float:
    """Share of the window's realised units sold by products on the forecast shelf (pairs)."""
    on_shelf = np.isin(grid.pair_key, distinct(grid.keys(shelves.m, shelves.k)))
    total = grid.real_pair.sum()
    return float(grid.real_pair[on_shelf].sum() / total) if total > 0 else float("nan")


def _controls(run: Window, cal: CalibrationResult, full: Panel, rates: np.ndarray, seed: int) -> dict[str, Forecast]:
    skus = full.products["sku_id"].to_numpy()
    omega, exposed = ctl.omega_by_code(cal.popularity, skus)
    g2 = full.products["category_l2"].astype(str).to_numpy()
    _, g2_code = np.unique(g2, return_inverse=True)
    out = {}
    stock = run.stock
    for name in ctl.POPULARITY_CONTROLS:
        new = ctl.control_omega(name, omega, exposed, g2_code, seed)
        ratio = np.divide(new, omega, out=np.ones_like(new), where=omega > 0)
        split_b = None
        if stock is not None:
            sm = StockModel.of(run.model, stock)
            split_b = sm.b * np.where(stock.products >= 0, ratio[np.maximum(stock.products, 0)], 0.0)
        pre_rates = ctl.popularity_rates(run.pre, run.model, rates, omega, new) if len(rates) else rates
        out[name] = run.play(name, pre_rates, split_b=split_b)
    kappa = cal.machines.set_index("machine_id")["kappa"].reindex(full.machines["machine_id"]).to_numpy(dtype=float)
    decided = stock.shelves() if stock is not None else None
    stock_rates = expected_rates(decided, run.model) if decided is not None else np.zeros(0)
    common = ctl.flat_scale_common(
        np.concatenate([rates, stock_rates]),
        kappa[np.concatenate([run.pre.m, decided.m if decided is not None else np.zeros(0, np.int64)])],
    )
    flat_pre = rates * common / kappa[run.pre.m] if len(rates) else rates
    flat_stock = None if stock is None else common / kappa[stock.machines]
    out["flat_machine_scale"] = run.play("flat_machine_scale", flat_pre, stock_factor=flat_stock)
    out["no_shock"] = run.play("no_shock", rates, shock=False)
    return {k: out[k] for k in ctl.CONTROLS}


def _estimators(
    run: Window,
    source: Source,
    until: CalibrationConfig,
    settings: DemandSettings,
    full: Panel,
    estimators: tuple[str, ...],
    notes: list[str],
) -> dict[str, EstimatorRun]:
    """Each estimator's training calibration on the same shelves, seeds and level rule."""
    out: dict[str, EstimatorRun] = {}
    for name in estimators:
        if name == DEFAULT_ESTIMATOR:
            continue
        try:
            alt = calibrate(source, until, settings, check_estimator(name))
        except (InsufficientDataError, CalibrationError, NonFiniteError) as exc:
            notes.append(f"the {name} estimator could not calibrate the training window: {exc}")
            out[name] = EstimatorRun(estimates=None, forecast=None)
            continue
        alt_model = demand_model(alt, full, settings)
        f = run.play(f"estimator_{name}", run.pre_rates(alt_model), model=alt_model)
        out[name] = EstimatorRun(estimates=alt.estimates, forecast=f)
    return out


__all__ = ["REFERENCES", "ValidationResult", "demand_model", "validate"]

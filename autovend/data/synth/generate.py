"""Generate the embedded synthetic operator: a contract source folder plus its known truth beside it.

The truth folder is for recovery tests only; no calibration code reads it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from autovend.canonical import canonical_frame, canonical_value, json_bytes, parquet_bytes
from autovend.data.calendar import build_calendar
from autovend.data.partwrite import write_partitioned
from autovend.data.synth.catalog import KEPT_SUBCATEGORIES, build_catalog
from autovend.data.synth.config import SynthConfig
from autovend.data.synth.network import build_machines
from autovend.data.synth.operator import OperatorInputs, OperatorRun, run_operator
from autovend.data.synth.records import inventory_counts, order_lines
from autovend.data.synth.truth import Truth, build_truth, with_kappa
from autovend.data.weather import daily_weather
from autovend.demand.settings import DemandSettings
from autovend.demand.shock import sigma_from_r
from autovend.io import OutputKind, check_distinct_outputs, check_output_dir, output_dir
from autovend.progress import step, stepped
from autovend.rng import stream

TRUTH_NORMALISATION = (
    "b = kappa * pi * gamma * omega (eq. 4). Compare estimates and truth after applying "
    "autovend.calibration.normalise.canonical to both with the same reference products: omega has "
    "mean 1 within each subcategory over the reference products, gamma geometric mean 1 within each "
    "category_l1, pi geometric mean 1 over categories within each site type, kappa takes the rest. "
    "The stored factors are canonical with all catalog products as the reference."
)


@dataclass(frozen=True)
class SyntheticSource:
    """The generated tables (contract tables and truth) before they are written."""

    source_yaml: dict
    machines: pd.DataFrame
    products: pd.DataFrame
    orders: pd.DataFrame
    inventory: pd.DataFrame
    weather: pd.DataFrame
    truth_json: dict
    truth_tables: dict[str, pd.DataFrame]


# the steps of `synthesize` and their shares of its time (autovend.progress)
SYNTH_STEPS = {
    "catalog, machines, calendar, weather": 0.2,
    "first scaling run": 1.5,
    "second scaling run": 1.3,
    "final run": 1.3,
    "order lines and inventory counts": 0.8,
    "truth tables": 0.1,
}


def _kept_target(config: SynthConfig, machines: pd.DataFrame, n_days: int) -> np.ndarray:
    kept_mean = config.target_units * (1 - config.truth.out_of_scope_share) / (len(machines) * n_days)
    level = machines["level"].to_numpy()
    return level / level.mean() * kept_mean


def _run_scaled(
    config: SynthConfig,
    settings: DemandSettings,
    catalog: pd.DataFrame,
    machines: pd.DataFrame,
    truth0: Truth,
    calendar: pd.DataFrame,
    weather: pd.DataFrame,
) -> tuple[Truth, np.ndarray, OperatorRun]:
    """Run the operator three times: two passes rescale kappa and the compartment, then the final run.

    The operator reacts to demand (par levels follow observed sales), so one rescale is not enough.
    """
    n_days = len(calendar)
    kept_target = _kept_target(config, machines, n_days)
    x, u = config.truth.x, config.truth.u
    kappa = kept_target * (u + x) / (u * x * truth0.R_hat)
    has_c = machines["has_compartment"].to_numpy()
    share = config.truth.out_of_scope_share
    oos_level = np.where(has_c, kept_target * share / ((1 - share) * max(has_c.mean(), 1e-9)), 0.0)
    run = None
    truth = truth0
    for name, final in (("first scaling run", False), ("second scaling run", False), ("final run", True)):
        step(name)
        truth = with_kappa(truth0, kappa)
        inp = OperatorInputs(
            config, settings, catalog, machines, truth.b, truth.U, oos_level, kept_target, calendar, weather
        )
        run = run_operator(inp)
        if not final:
            kept_units = run.daily["sales_kept"].sum()
            oos_units = run.daily["sales_oos"].sum()
            kappa = kappa * config.target_units * (1 - share) / max(kept_units, 1.0)
            if oos_units > 0:
                oos_level = oos_level * config.target_units * share / oos_units
    assert run is not None
    return truth, oos_level, run


@stepped("synthesis", SYNTH_STEPS)
def synthesize(config: SynthConfig, settings: DemandSettings | None = None) -> SyntheticSource:
    """Build the synthetic operator's source tables and truth in memory (deterministic in config.seed)."""
    step("catalog, machines, calendar, weather")
    settings = settings or DemandSettings()
    catalog = build_catalog(config.seed, config.truth.omega_sigma)
    machines = build_machines(config)
    calendar = build_calendar("CN", config.start, config.end, language="zh_CN")
    weather = daily_weather(config.start, config.end, config.seed)
    truth0 = build_truth(config, settings, catalog, machines)
    truth, oos_level, run = _run_scaled(config, settings, catalog, machines, truth0, calendar, weather)

    step("order lines and inventory counts")
    dates = pd.DatetimeIndex(calendar["date"])
    rng = stream(config.seed, "records")
    orders = order_lines(run.sales, machines, catalog, dates, config.operator, rng)
    inv_counts = run.counts[machines["has_inventory"].to_numpy()[run.counts["m"].to_numpy()]]
    inventory = inventory_counts(inv_counts, machines, catalog, dates, rng)

    contract_products = catalog[
        ["sku_id", "name", "category_l1", "category_l2", "ref_price", "unit_cost", "shelf_life_days"]
    ]
    contract_machines = machines[["machine_id", "site_type", "location", "capacity"]]
    weather_out = weather.assign(date=weather["date"].dt.strftime("%Y-%m-%d"))
    source_yaml = {
        "name": config.name,
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "country": "CN",
        "description": (
            "Synthetic vending operator in Shanghai generated by `autovend synth` from a known truth "
            f"(seed {config.seed}); stands in for the private order records of the AutoVend paper."
        ),
        "licence": "CC0-1.0 (generated data)",
    }
    step("truth tables")
    truth_json, truth_tables = _truth_outputs(config, settings, catalog, machines, truth, oos_level, run, dates)
    return SyntheticSource(
        source_yaml=source_yaml,
        machines=contract_machines,
        products=contract_products,
        orders=orders,
        inventory=inventory,
        weather=weather_out,
        truth_json=truth_json,
        truth_tables=truth_tables,
    )


def _truth_outputs(
    config: SynthConfig,
    settings: DemandSettings,
    catalog: pd.DataFrame,
    machines: pd.DataFrame,
    truth: Truth,
    oos_level: np.ndarray,
    run: OperatorRun,
    dates: pd.DatetimeIndex,
) -> tuple[dict, dict[str, pd.DataFrame]]:
    daily = run.daily.copy()
    R = truth.R
    daily["ratio"] = daily["W_real"] / R[daily["m"].to_numpy()]
    has_inv = machines["has_inventory"].to_numpy()
    pos = daily["ratio"] > 0
    log_ratio = np.log(daily.loc[pos, "ratio"])
    x_all = float(np.exp(log_ratio.mean()))
    inv_rows = has_inv[daily.loc[pos, "m"].to_numpy()]
    x_inv = float(np.exp(log_ratio[inv_rows].mean()))
    u = truth.u
    n_days = len(dates)
    kept_units = float(daily["sales_kept"].sum())
    oos_units = float(daily["sales_oos"].sum())
    per_m = daily.groupby("m").agg(
        x_m=("ratio", lambda r: float(np.exp(np.log(r[r > 0]).mean())) if (r > 0).any() else np.nan),
        mean_daily_units_kept=("sales_kept", "mean"),
        mean_daily_units_oos=("sales_oos", "mean"),
    )
    machines_t = machines[["machine_id", "site_type", "location", "has_inventory", "has_compartment", "level"]].copy()
    machines_t["kappa"] = truth.kappa
    machines_t["R"] = R
    machines_t["U"] = truth.U
    machines_t["oos_level"] = oos_level
    machines_t = machines_t.join(per_m, how="left")
    products_t = catalog[["sku_id", "category_l1", "category_l2", "kept", "omega"]].copy()
    products_t["gamma"] = truth.gamma.reindex(catalog["category_l2"]).to_numpy()
    site_t = (
        truth.pi.rename_axis("site_type")
        .reset_index()
        .melt(id_vars="site_type", var_name="category_l1", value_name="pi")
    )
    sub_t = catalog.loc[catalog["kept"], ["category_l2", "category_l1"]].drop_duplicates().reset_index(drop=True)
    sub_t["gamma"] = truth.gamma.reindex(sub_t["category_l2"]).to_numpy()
    daily_t = pd.DataFrame(
        {
            "machine_id": machines["machine_id"].to_numpy()[daily["m"].to_numpy()],
            "date": dates[daily["day"].to_numpy()],
            "xi": daily["xi"],
            "W_real": daily["W_real"],
            "W_actual": daily["W_actual"],
            "expected_kept": daily["expected_kept"],
            "demand_kept": daily["demand_kept"].astype(np.int64),
            "sales_kept": daily["sales_kept"].astype(np.int64),
            "sales_oos": daily["sales_oos"].astype(np.int64),
            "fill_open": daily["fill_open"],
        }
    )
    truth_json = {
        "name": config.name,
        "seed": config.seed,
        "period": [config.start.isoformat(), config.end.isoformat()],
        "n_days": n_days,
        "normalisation": TRUTH_NORMALISATION,
        "u": u,
        "x_paper": config.truth.x,
        "e_paper": config.truth.e,
        "x": x_inv,
        "x_all_machines": x_all,
        "e": u / (u + x_inv),
        "x_definition": "geometric mean over machine-days (machines with inventory records) of W_real / R",
        "r": config.truth.r,
        "sigma": sigma_from_r(config.truth.r),
        "rho": config.truth.rho,
        "eta": settings.eta,
        "phi": settings.phi,
        "omega_sigma": config.truth.omega_sigma,
        "kept_subcategories": list(KEPT_SUBCATEGORIES),
        "units_total": kept_units + oos_units,
        "units_kept": kept_units,
        "kept_unit_share": kept_units / (kept_units + oos_units),
        "lost_demand_share_kept": 1.0 - kept_units / float(daily["demand_kept"].sum()),
        "demand_settings": settings.model_dump(mode="json"),
        # without drift the truth reads as before the drift setting existed (same bytes)
        "synth_config": config.model_dump(
            mode="json", exclude={"truth": {"popularity_drift"}} if config.truth.popularity_drift == 0 else None
        ),
        "notes": (
            "Out-of-scope products sell from a separate compartment with independent Poisson demand "
            "scaled by the machine's daily shock; they do not enter the drink/snack choice set."
        ),
    }
    tables = {
        "products": products_t,
        "machines": machines_t,
        "site_preference": site_t,
        "subcategory": sub_t,
        "daily": daily_t,
    }
    return truth_json, tables


def _as_written(table: pd.DataFrame) -> pd.DataFrame:
    """The table as its CSV holds it (each cell the text to_csv writes): a partitioned copy holds the same values."""
    import io

    text = table.to_csv(index=False, lineterminator="\n")
    return pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)


def write_source(
    src: SyntheticSource,
    out_dir: str | Path,
    truth_dir: str | Path,
    *,
    force: bool = False,
    partition_by: tuple[str, ...] | None = None,
) -> None:
    """Write the contract source folder and the truth folder, each atomically (all or nothing).

    `partition_by`: orders and inventory as hive-partitioned Parquet by these keys (`autovend.data.partwrite`).

    Each must be absent, empty or an earlier output of its kind (`autovend.io.output_dir`) unless `force`;
    both are checked before either is written.
    """
    check_distinct_outputs(out_dir, truth_dir)
    check_output_dir(truth_dir, OutputKind.TRUTH, force=force)
    with output_dir(out_dir, OutputKind.SOURCE, force=force) as tmp:
        (tmp / "source.yaml").write_text(
            yaml.safe_dump(src.source_yaml, sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
        src.machines.to_csv(tmp / "machines.csv", index=False, lineterminator="\n")
        src.products.to_csv(tmp / "products.csv", index=False, lineterminator="\n")
        for stem, table in (("orders", src.orders), ("inventory", src.inventory)):
            if partition_by is None:
                table.to_csv(tmp / f"{stem}.csv", index=False, lineterminator="\n")
            else:  # the values the CSV would hold, as the check reads them
                write_partitioned(_as_written(table), tmp, stem, partition_by)
        src.weather.to_csv(tmp / "weather.csv", index=False, lineterminator="\n")
    with output_dir(truth_dir, OutputKind.TRUTH, force=force) as tmp:
        # the truth is rounded like every export (autovend.canonical), so it is the same bytes on any CPU
        (tmp / "truth.json").write_bytes(json_bytes(canonical_value(src.truth_json)))
        for name, table in src.truth_tables.items():
            floats = [c for c in table.columns if pd.api.types.is_float_dtype(table[c].dtype)]
            canon = canonical_frame(table, nullable=floats, what=f"truth {name}")
            (tmp / f"{name}.parquet").write_bytes(parquet_bytes(canon))
        (tmp / "README.md").write_text(
            "# Truth of the synthetic operator\n\n"
            "The parameters the source beside this folder was generated from. For recovery tests only: "
            "no calibration code reads this folder.\n\n"
            f"Normalisation: {TRUTH_NORMALISATION}\n\n"
            "- truth.json: scalars (u, x, e, r, sigma, rho, eta, phi, unit totals, settings).\n"
            "- products.parquet: omega (popularity), gamma of its subcategory, kept flag.\n"
            "- machines.parquet: kappa, R (reference-shelf attraction), U = u*R, x_m, mean daily units.\n"
            "- site_preference.parquet: pi by site type and category_l1.\n"
            "- subcategory.parquet: gamma by category_l2.\n"
            "- daily.parquet: per machine-day shock xi, real-shelf attraction, expected and realised "
            "units, opening fill of the drink/snack shelf.\n",
            encoding="utf-8",
        )

"""Export: a calibration and its source become a world (`build_world`) frozen as a bundle (`export_world`).

The world takes from the source what the source says: its machines (all usable ones, N of them, or
those a network file maps devices to: `autovend.export.network`), its products with their names and
reference prices, its currency, country calendar and time zone, and the machines' capacities. What
the source cannot say is borrowed and the README says so: the demand settings of the benchmark
(paper §3.3), the paper's operating rules (converted to the source's currency at its price level),
unit costs drawn in margin bands where the source has none, seeded weather around named climate
normals. Every random choice comes from the export seed, so the same inputs give the same world.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from autovend.calibration.estimates import Estimates, EstimatesError
from autovend.calibration.idrecord import Estimate
from autovend.calibration.result import CalibrationResult
from autovend.canonical import canonical_frame, json_bytes, round_array, round_sig
from autovend.data.calendar import CALENDAR_COLUMNS, build_calendar
from autovend.data.weather import WEATHER_COLUMNS, daily_weather, forecast_weather
from autovend.demand.model import DemandModel, ShockProcess
from autovend.demand.settings import DemandSettings, load_demand_settings
from autovend.errors import ExportError, NonFiniteError
from autovend.export.catalog import build_catalog
from autovend.export.climate import resolve_climate
from autovend.export.identified import world_ranges
from autovend.export.network import Device, own_network, read_network, select_network
from autovend.export.params import ExportParams, load_economics, load_export_params
from autovend.export.readme import Provenance, readme_text
from autovend.export.source import SourceTables, read_source_tables
from autovend.progress import step, stepped
from autovend.runlock import hold_output_folder
from autovend.shipped import NETWORKS, resolve_shipped
from autovend.world.bundle import (
    FORECAST_COLUMNS,
    MANIFEST,
    README,
    check_output,
    dated,
    make_manifest,
    manifest_hash,
    world_files,
    write_bundle,
)
from autovend.world.model import MADE_TO_ORDER_SHELF_LIFE_DAYS, Economics, World

ESTIMATE_COLUMNS = ("U", "kappa", "R")  # the devices' estimated columns, rounded (autovend.canonical)
REFERENCE_PRICE_LEVEL_CNY = 6.5  # median reference price of the benchmark's CN catalog (worlds/cn20)
MONEY_FIELDS = ("start_cash", "warehouse_rent_per_unit_day", "machine_rent_per_day", "visit_fee", "expired_sale_fine")


@dataclass(frozen=True)
class NetworkChoice:
    """Which devices a world gets: those of a network file, or the source's own machines (all, or N)."""

    devices: tuple[Device, ...] | None = None
    file_name: str = ""
    file_sha256: str = ""
    n_machines: int | None = None

    @classmethod
    def from_file(cls, path: str | Path) -> NetworkChoice:
        """The devices of a network file, with the file's name and hash for the provenance."""
        file = Path(path)
        devices = read_network(file)
        return cls(devices=devices, file_name=file.name, file_sha256=hashlib.sha256(file.read_bytes()).hexdigest())

    def describe(self, n_devices: int) -> str:
        """One line for the README."""
        if self.devices is not None:
            return f"network file `{self.file_name}` (sha256 {self.file_sha256[:12]}...), {n_devices} devices"
        if self.n_machines is not None:
            return f"{n_devices} of the source's own machines, drawn by the seeded rule stratified by site type"
        return f"all {n_devices} usable machines of the source"


@dataclass(frozen=True, eq=False)
class ExportResult:
    """What an export wrote: the world, its manifest, file sizes in bytes and the time it took."""

    world: World
    manifest: dict[str, Any]
    sizes: dict[str, int]
    seconds: float


def _check_inputs(calibration: CalibrationResult, source: SourceTables, demand: DemandSettings) -> None:
    """Refuse a calibration made from another source or under other demand settings."""
    cal_hash = calibration.estimates.source_hash
    if cal_hash != source.content_hash:
        raise ExportError(
            f"the calibration was made from a source with content hash {cal_hash[:12]}..., but the source "
            f"folder given has hash {source.content_hash[:12]}...; pass the source the calibration was made "
            "from, or calibrate this source again"
        )
    used = calibration.estimates.settings
    if used is not None and used != demand.model_dump(mode="json"):
        differ = sorted(k for k, v in demand.model_dump(mode="json").items() if used.get(k) != v)
        raise ExportError(
            f"the demand settings differ from those the calibration was made with (in {differ}); pass the "
            "settings file used for calibration (--settings), or calibrate again with the new settings"
        )


def _candidates(calibration: CalibrationResult, source: SourceTables) -> pd.DataFrame:
    """Calibrated machines with the source's location (the calibration does not carry it)."""
    mach = calibration.machines.copy()
    mach["machine_id"] = mach["machine_id"].astype(str)
    loc = source.machines.assign(machine_id=source.machines["machine_id"].astype(str)).set_index("machine_id")
    mach["location"] = loc["location"].reindex(mach["machine_id"]).to_numpy()
    if "kappa_source" not in mach:
        mach["kappa_source"] = "structural_fit"
    if "n_days" not in mach:
        mach["n_days"] = 0
    return mach


def world_economics(economics: Economics, currency: str, rate: float | None, prices: pd.Series) -> Economics:
    """The benchmark's operating rules in the source's currency.

    Unchanged when the currencies agree. Otherwise every amount is multiplied by `rate` (the value of
    one unit of the rules' currency in the source's), or, when `rate` is None, by the source's price
    level: the median reference price of its catalog over REFERENCE_PRICE_LEVEL_CNY; amounts are then
    rounded to cents (a rent never below one cent).
    """
    if currency == economics.currency:
        return economics
    if rate is None:
        rate = float(np.median(prices.to_numpy(dtype=float))) / REFERENCE_PRICE_LEVEL_CNY
    converted = {
        f: max(round(getattr(economics, f) * rate, 2), 0.01) if getattr(economics, f) > 0 else 0.0 for f in MONEY_FIELDS
    }
    return economics.model_copy(update={"currency": currency, **converted})


def _devices(
    calibration: CalibrationResult, source: SourceTables, params: ExportParams, net: NetworkChoice
) -> pd.DataFrame:
    cands = _candidates(calibration, source)
    if net.devices is not None:
        return select_network(cands, params.seed, net.devices, capacity=params.capacity, min_days=params.min_days)
    return own_network(
        cands, params.seed, n_machines=net.n_machines, capacity=params.capacity, min_days=params.min_days
    )


def build_world(
    calibration: CalibrationResult,
    source: SourceTables,
    name: str,
    params: ExportParams,
    demand: DemandSettings,
    economics: Economics,
    network: NetworkChoice | None = None,
) -> World:
    """The world of a calibration: devices, catalog, b, U, shocks, economics, weather, forecasts and calendar.

    Pure apart from reading nothing: every random choice comes from `params.seed`. Raises
    ExportError when the calibration does not belong to the source or to these demand settings, or
    when a parameter the world needs is not a finite number.
    """
    _check_inputs(calibration, source, demand)
    machines = _devices(calibration, source, params, network or NetworkChoice())
    catalog = build_catalog(
        calibration.popularity[["sku_id", "category_l1", "category_l2"]],
        source.products,
        params.seed,
        params.margins,
        params.other_margin,
    )
    b_frame = calibration.base_attraction(machines["source_machine_id"].tolist())
    if [str(c) for c in b_frame.columns] != catalog["sku_id"].tolist():
        raise ExportError("the calibration's base attraction and popularity table list different products")
    b = np.ascontiguousarray(round_array(b_frame.to_numpy(dtype=np.float64)))
    if not np.all(np.isfinite(b) & (b >= 0)):
        raise ExportError(
            "the calibration gives non-finite or negative base attractions for the chosen machines; "
            "check the calibration's site preference and subcategory tables"
        )
    try:
        machines = canonical_frame(machines, rounded=ESTIMATE_COLUMNS, what="the world's machines")
        sigma, rho = round_sig(calibration.estimates.sigma), round_sig(calibration.estimates.rho)
    except NonFiniteError as exc:
        raise ExportError(f"{exc}; a world needs every demand parameter (see the calibration report)") from exc
    eco = world_economics(economics, source.meta.currency, params.economics_rate, catalog["ref_price"])
    made = bool(source.meta.made_to_order)
    if made:  # ingredients keep: no expiry within any horizon, hence no expired sale and no fine for one
        catalog = catalog.assign(shelf_life_days=MADE_TO_ORDER_SHELF_LIFE_DAYS, shelf_life_source="made_to_order")
        eco = eco.model_copy(update={"expired_sale_fine": 0.0})
    country = params.country or source.meta.country
    if country != source.meta.country:
        raise ExportError(
            f"export.country is {country} but the source's country is {source.meta.country} (source.yaml): a params "
            "file copied from another source? Remove export.country (and its timezone, calendar_language and "
            "climate) or set them for this source"
        )
    normals = resolve_climate(params.climate, country, source.weather, Path.cwd())
    start, horizon = params.start, eco.horizon_days
    weather = daily_weather(start, start + dt.timedelta(days=horizon + params.forecast_days), params.seed, normals)
    forecast = forecast_weather(weather, params.seed, horizon=params.forecast_days)
    calendar = build_calendar(
        country,
        start,
        start + dt.timedelta(days=horizon + params.calendar_lookahead_days + params.calendar_margin_days),
        params.calendar_language,
    )
    model = DemandModel(
        b=b,
        U=machines["U"].to_numpy(dtype=float),
        capacity=machines["capacity"].to_numpy(dtype=float),
        site_types=tuple(machines["site_type"].astype(str)),
        categories=tuple(catalog["category_l1"].astype(str)),
        settings=demand,
        shock=ShockProcess(sigma=sigma, rho=rho),
    )
    return World(
        name=name,
        machines=machines.drop(columns=["U"]),
        catalog=catalog,
        demand_model=model,
        start_date=start,
        weather=dated(weather[WEATHER_COLUMNS]),
        forecast=dated(forecast[FORECAST_COLUMNS]),
        calendar=dated(calendar[CALENDAR_COLUMNS]),
        economics=eco,
        timezone=params.timezone or source.meta.timezone,
        country=country,
        made_to_order=made,
    )


def _estimate_line(name: str, value: object, record: Estimate | None) -> tuple[bool, str]:
    """(estimated?, README line) of a scalar parameter, from the calibration's identification record."""
    if record is None:
        return True, f"{name} = {value}"
    weak = f" (weak: {record.reason})" if record.weak else ""
    if record.status == "estimated":
        return True, f"{name} = {value}{weak}"
    return False, f"{name} = {value}: {record.status}, {record.reason}"


def _settings_not_estimates(world: World, source: SourceTables, params: ExportParams) -> tuple[list[str], list[str]]:
    """(from the source, settings) README lines for what the records may not tell: stock, capacity, shelf life."""
    m, c = world.machines, world.catalog
    given, settings = [], []
    if source.meta.made_to_order:
        caps = sorted(set(int(v) for v in m["capacity"].to_numpy()))
        settings.append(
            "made to order (source.yaml `made_to_order`): the records know no stock, no empty shelf and no expiry. "
            "In this world a unit of a product is the ingredients of one serving and a device's capacity is the "
            f"servings of ingredients it holds ({', '.join(map(str, caps))}): ingredient stock, not unlimited, "
            "ordered, restocked and run out of as the benchmark's goods are. Ingredients do not expire (shelf life "
            f"{MADE_TO_ORDER_SHELF_LIFE_DAYS:,} days) and no expired-sale fine applies; facings and restocking "
            "are benchmark settings, not estimates"
        )
    src_cap = source.machines.assign(machine_id=source.machines["machine_id"].astype(str)).set_index("machine_id")
    cap_col = src_cap["capacity"] if "capacity" in src_cap else pd.Series(np.nan, index=src_cap.index)
    source_cap = cap_col.reindex(m["source_machine_id"].astype(str)).to_numpy(dtype=float)
    own = np.isfinite(source_cap) & (source_cap == m["capacity"].to_numpy(dtype=float))
    if own.all():
        given.append("device capacities: the source's machines table")
    else:
        caps = sorted(set(int(v) for v in m["capacity"].to_numpy()[~own]))
        why = (
            "export.capacity"
            if params.capacity is not None
            else "the network file's, or the calibration's fill-in for an unknown capacity"
        )
        settings.append(
            f"capacity of {int((~own).sum())} of {len(m)} devices ({', '.join(map(str, caps))} units): a setting, "
            f"not an estimate ({why}): the source gives no capacity for their machines, or another one"
        )
    origin = c["shelf_life_source"].astype(str) if "shelf_life_source" in c else pd.Series("default", index=c.index)
    if source.meta.made_to_order:
        return given, settings  # no shelf lives: the line above says so
    from_source = int(origin.isin(["source", "mapped"]).sum())
    if from_source:
        given.append(f"shelf lives of {from_source} products: the source's, mapped to 30 or 90 days")
    rest = len(c) - from_source
    if rest:
        by_sub = int((origin == "subcategory").sum())
        settings.append(
            f"shelf lives of {rest} products: benchmark settings, not estimates (the source gives none: {by_sub} "
            f"take their subcategory's majority in the source, {rest - by_sub} the perishable rule)"
        )
    return given, settings


def _origin(
    world: World, est: Estimates, params: ExportParams, economics: Economics, source: SourceTables
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the world's numbers came from: (estimated, borrowed) lines for the README."""
    m, c = world.machines, world.catalog
    ident = est.identification
    structural = int((m["kappa_source"].astype(str) == "structural_fit").sum())
    estimated = [
        f"base attractions b = kappa pi gamma omega: popularity of {world.n_products} products, site preferences, "
        f"{c['category_l2'].nunique()} subcategory coefficients; machine scales of the {world.n_machines} devices' "
        f"source machines ({structural} from known shelves, {world.n_machines - structural} from sales alone)",
        "product names, categories and reference prices: the source's products table",
    ]
    borrowed = [
        "demand settings (eta, phi, price elasticities by site type, weather and calendar multipliers): the "
        "benchmark's (paper §3.3, params/benchmark.yaml `demand`)",
        f"weather: a seeded series around the {params.climate} climate normals (export.climate); calendar: "
        f"public holidays of {world.country}",
    ]
    shock = world.demand_model.shock
    for name, value, record in (
        ("no-purchase weight u (U = u R per device)", est.u, ident.u if ident else None),
        (f"shock overdispersion r (sigma {shock.sigma:.4g})", est.r, ident.r if ident else None),
        ("shock autocorrelation rho", shock.rho, ident.rho if ident else None),
    ):
        own, line = _estimate_line(name, value, record)
        (estimated if own else borrowed).append(line)
    pooled = world.demand_model.settings.site_types_without_settings(m["site_type"].astype(str))
    if pooled:
        borrowed.append(f"site types without own demand settings use the pooled `unknown` ones: {', '.join(pooled)}")
    eco = world.economics
    if eco.currency != economics.currency:
        rate = eco.visit_fee / economics.visit_fee
        borrowed.append(
            "operating rules (start cash, fees, rents, fines, order lead times, restock visits): the paper's, "
            f"converted from {economics.currency} to {eco.currency} at about {rate:.3g} (export.economics_rate, "
            f"else the catalog's price level against {REFERENCE_PRICE_LEVEL_CNY} CNY)"
        )
    else:
        borrowed.append(
            "operating rules (start cash, fees, rents, fines, order lead times, restock visits): the paper's, "
            f"in {eco.currency}"
        )
    given, settings = _settings_not_estimates(world, source, params)
    estimated += given
    borrowed = settings + borrowed
    drawn = int((c["unit_cost_source"].astype(str) == "margin_draw").sum()) if "unit_cost_source" in c else 0
    if drawn:
        borrowed.append(f"unit costs of {drawn} products: drawn in their category's margin band (export.margins)")
    return tuple(estimated), tuple(borrowed)


# the steps of `export_world` and their shares of its time (autovend.progress)
EXPORT_STEPS = {
    "read the calibration": 0.6,
    "read the source": 0.2,
    "build the world": 0.3,
    "tables and README": 0.1,
    "manifest": 0.1,
    "write the bundle": 0.1,
}


@stepped("export-world", EXPORT_STEPS)
def export_world(
    calibration_dir: str | Path,
    source_dir: str | Path,
    out_dir: str | Path,
    params_path: str | Path | None = None,
    settings_path: str | Path | None = None,
    *,
    network: str | Path | None = None,
    n_machines: int | None = None,
    force: bool = False,
) -> ExportResult:
    """Read a calibration and its source, build the world and write it as a bundle named after `out_dir`.

    `network` is a network file (devices mapped onto calibrated machines); without it the world has
    the source's own machines, all of them or `n_machines`. An existing exported bundle at `out_dir` is
    replaced; a shipped world or another non-empty folder only with `force` (`autovend.world.owner`). The
    folder is locked from the check to the write (`OutputBusyError` for a second export meanwhile).
    """
    with hold_output_folder(out_dir, "autovend export-world"):  # one writer of the folder from check to write
        return _export(
            calibration_dir, source_dir, Path(out_dir), params_path, settings_path, network, n_machines, force
        )


def _export(
    calibration_dir: str | Path,
    source_dir: str | Path,
    out_dir: Path,
    params_path: str | Path | None,
    settings_path: str | Path | None,
    network: str | Path | None,
    n_machines: int | None,
    force: bool,
) -> ExportResult:
    t0 = time.perf_counter()
    network = None if network is None else resolve_shipped(network, NETWORKS)  # a file, or a shipped name
    check_output(out_dir, force, (calibration_dir, source_dir, params_path, settings_path, network))
    if network is not None and n_machines is not None:
        raise ExportError("give either --network or --machines, not both")
    cal_dir = Path(calibration_dir)
    step("read the calibration")
    try:
        calibration = CalibrationResult.read(cal_dir)
    except (OSError, ValueError, EstimatesError) as exc:
        raise ExportError(
            f"cannot read the calibration in {cal_dir} ({exc}); run `autovend calibrate SOURCE_DIR -o {cal_dir}`"
        ) from exc
    step("read the source")
    source = read_source_tables(source_dir)
    params = load_export_params(params_path)
    demand = load_demand_settings(settings_path)
    economics = load_economics(settings_path)
    choice = NetworkChoice.from_file(network) if network is not None else NetworkChoice(n_machines=n_machines)
    step("build the world")
    world = build_world(calibration, source, out_dir.name, params, demand, economics, choice)
    estimates = calibration.estimates
    estimated, borrowed = _origin(world, estimates, params, economics, source)
    command = " ".join(
        [
            f"autovend export-world CALIBRATION_DIR SOURCE_DIR -o worlds/{out_dir.name}",
            *([f"--network {choice.file_name}"] if network is not None else []),
            *([f"--machines {n_machines}"] if n_machines is not None else []),
            *(["--params PARAMS"] if params_path else []),
            *(["--settings SETTINGS"] if settings_path else []),
        ]
    )
    provenance = Provenance(
        source_name=estimates.source_name,
        source_hash=source.content_hash,
        calibration_hash=calibration.content_hash(),
        network=choice.describe(world.n_machines),
        command=command,
        export=params.model_dump(mode="json"),
        estimated=estimated,
        borrowed=borrowed,
        notes=estimates.notes,
        estimator=estimates.estimator,
    )
    step("tables and README")
    files = world_files(world)
    files[README] = readme_text(world, provenance, files).encode("utf-8")
    step("manifest")
    manifest = make_manifest(
        world,
        files,
        source.content_hash,
        provenance.calibration_hash,
        {
            "export": params.model_dump(mode="json"),
            "network": {"file": choice.file_name, "sha256": choice.file_sha256, "machines": n_machines},
            "calibration": {} if estimates.params is None else estimates.params,
            "source_name": provenance.source_name,
        },
    )
    manifest["ranges"] = world_ranges(world, estimates, source).payload()  # the identified set: provenance
    manifest["manifest_hash"] = manifest_hash(manifest)
    step("write the bundle")
    write_bundle(out_dir, files, manifest, force=force)
    sizes = {n: len(d) for n, d in files.items()}
    sizes[MANIFEST] = len(json_bytes(manifest))
    world = dataclasses.replace(world, world_hash=manifest["world_hash"])
    return ExportResult(world=world, manifest=manifest, sizes=sizes, seconds=time.perf_counter() - t0)

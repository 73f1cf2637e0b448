"""The README of an exported world: what it is, how it was made, which numbers came from where."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from autovend import __version__
from autovend.canonical import SIGNIFICANT_DIGITS
from autovend.world.describe import horizon_holidays
from autovend.world.model import BUNDLE_SCHEMA_VERSION, World
from autovend.world.price_response import price_response, readme_lines


@dataclass(frozen=True)
class Provenance:
    """Where a world came from: source, calibration, network, the export's settings and what was borrowed."""

    source_name: str
    source_hash: str
    calibration_hash: str
    network: str  # "network file NAME (sha256 ...)" or "the source's own N machines"
    command: str
    export: dict[str, object]  # the export params as used (JSON-ready)
    borrowed: tuple[str, ...] = ()  # one line per parameter group that the source did not estimate
    estimated: tuple[str, ...] = ()  # one line per parameter group estimated from the source
    notes: tuple[str, ...] = field(default_factory=tuple)  # the calibration's notes
    estimator: str = "structural"  # the calibration's estimator (`autovend.calibration.estimator`)


def _count(frame: pd.DataFrame, column: str, value: str) -> int:
    return int((frame[column].astype(str) == value).sum()) if column in frame else 0


def _fmt_range(values: pd.Series) -> str:
    return f"{float(values.min()):.1f} to {float(values.max()):.1f}"


def _capacities(m: pd.DataFrame) -> str:
    caps = sorted(set(int(c) for c in m["capacity"])) if len(m) else []
    return f"capacity {caps[0]} units each" if len(caps) == 1 else f"capacities {caps[0]}-{caps[-1]} units"


def _numbers(world: World) -> list[str]:
    m, c = world.machines, world.catalog
    end = world.date_of(world.horizon_days)
    sites = m.groupby("site_type", sort=False).size()
    eco, dm = world.economics, world.demand_model
    return [
        f"- horizon: {world.horizon_days} days, {world.start_date.isoformat()} to {end.isoformat()}, "
        f"{world.timezone} ({world.country})",
        f"- devices: {world.n_machines} (" + ", ".join(f"{n} {s}" for s, n in sites.items()) + f"), {_capacities(m)}",
        f"- catalog: {world.n_products} products in {c['category_l2'].nunique()} subcategories ("
        + ", ".join(f"{n} {k}" for k, n in c["category_l1"].value_counts().sort_index().items())
        + f"); prices in {eco.currency}",
        f"- unit costs from the source: {_count(c, 'unit_cost_source', 'source')}; drawn in the "
        f"margin band: {_count(c, 'unit_cost_source', 'margin_draw')}",
        "- shelf lives: "
        + ", ".join(f"{n} x {d} days" for d, n in c["shelf_life_days"].value_counts().sort_index().items()),
        f"- demand: eta {dm.settings.eta}, phi {dm.settings.phi}, price elasticities "
        + ", ".join(f"{s} {dm.settings.elasticity[s]}" for s in sites.index),
        f"- shock: sigma {dm.shock.sigma:.4f}, rho {dm.shock.rho:.4f}",
        f"- economics ({eco.currency}): start cash {eco.start_cash:,.2f}, visit fee {eco.visit_fee:.2f}, "
        f"machine rent {eco.machine_rent_per_day:.2f} a day, warehouse rent {eco.warehouse_rent_per_unit_day:.2f} "
        f"a unit-day, fine {eco.expired_sale_fine:,.2f} per expired unit sold",
        f"- weather: daily maximum {_fmt_range(world.weather['t_max_c'])} C, "
        f"{int((world.weather['precip_mm'] >= 1.0).sum())} days with >= 1 mm; forecasts "
        f"{int(world.forecast['lead'].max()) if len(world.forecast) else 0} days ahead",
        f"- calendar: {len(world.calendar)} days, {len(horizon_holidays(world))} holidays or makeup "
        "workdays in the horizon",
    ]


def readme_text(world: World, provenance: Provenance, files: dict[str, bytes]) -> str:
    """A short description of the bundle, its origin and its numbers (Markdown)."""
    m = world.machines
    lines = [
        f"# World bundle `{world.name}`",
        "",
        "A frozen AutoVend world: the network, catalog, demand parameters, weather and calendar that the",
        "simulator loads. Do not edit these files: `autovend.world.bundle.load_world` checks every file",
        "against `manifest.json` and refuses a changed bundle. Re-export instead:",
        "",
        "```",
        provenance.command,
        "```",
        "",
        "## Origin",
        "",
        f"- source: `{provenance.source_name}`, content hash `{provenance.source_hash}`",
        f"- calibration content hash `{provenance.calibration_hash}`, {provenance.estimator} estimator"
        + (
            " (u and the machine scales from a structural fit of imputed demand, r pooled over machines)"
            if provenance.estimator == "structural"
            else " (the paper's definitions: kappa from observed mean daily units, e the log-log slope, "
            "r the median r_m, u = x e / (1 - e))"
        ),
        f"- network: {provenance.network}",
        f"- made by autovend {__version__}, bundle schema {BUNDLE_SCHEMA_VERSION}; export seed "
        f"{provenance.export.get('seed')}",
        "",
        "### Estimated from this source",
        "",
        *(f"- {line}" for line in provenance.estimated),
        "",
        "### Borrowed (not identified by this source)",
        "",
        *(f"- {line}" for line in provenance.borrowed),
        *(["", "### Calibration notes", "", *(f"- {n}" for n in provenance.notes)] if provenance.notes else []),
        "",
        "## Numbers",
        "",
        *_numbers(world),
        "",
        *readme_lines(price_response(world)),
        "",
        "## Devices",
        "",
        "| device | location | source machine | kappa from |",
        "|---|---|---|---|",
        *(
            f"| {r.device_id} | {r.location} | {r.source_machine_id} | {r.kappa_source} |"
            for r in m.itertuples(index=False)
        ),
        "",
        "## Files",
        "",
        *(f"- `{n}`: {len(data):,} bytes" for n, data in sorted(files.items())),
        "- `README.md`: this file",
        "- `manifest.json`: schema version, the content hash of every table and of settings.json (over values,",
        "  not bytes), the README's SHA-256, source and calibration hashes, params, `world_hash` (the world's",
        f"  identity) and `manifest_hash`. Estimates are rounded to {SIGNIFICANT_DIGITS} significant digits, so",
        "  the world rebuilds to the same hash on any CPU.",
        "",
        "`base_attraction.parquet` holds b in long form (device_id, sku_id, b): devices in device order,",
        "products in catalog order within each device. b and U are the calibrated values of the source",
        "machines, unchanged even where a device holds another number of units than its source machine.",
        "",
    ]
    return "\n".join(lines)

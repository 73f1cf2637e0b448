"""Describing a world: the bundle's README text and the summary `autovend world info` prints."""

from __future__ import annotations

from typing import Any

import pandas as pd

from autovend import __version__
from autovend.canonical import SIGNIFICANT_DIGITS
from autovend.world.model import BUNDLE_SCHEMA_VERSION as SCHEMA_VERSION
from autovend.world.model import World


def _count(frame: pd.DataFrame, column: str, value: str) -> int:
    return int((frame[column].astype(str) == value).sum()) if column in frame else 0


def _fmt_range(values: pd.Series) -> str:
    return f"{float(values.min()):.1f} to {float(values.max()):.1f}"


def horizon_holidays(world: World) -> pd.DataFrame:
    """Calendar rows of the horizon that are holidays or makeup workdays (date, is_workday, holiday_name)."""
    cal = world.calendar
    dates = pd.to_datetime(cal["date"]).dt.date
    end = world.date_of(world.horizon_days)
    in_horizon = (dates >= world.start_date) & (dates <= end)
    makeup = cal["is_workday"].astype(bool) & (pd.to_datetime(cal["date"]).dt.day_of_week >= 5)
    rows = cal[in_horizon & ((cal["day_type"] == "holiday") | makeup)]
    return rows[["date", "is_workday", "holiday_name"]].reset_index(drop=True)


def readme_text(world: World, provenance: dict[str, Any], files: dict[str, bytes]) -> str:
    """A short description of the bundle, its origin and its numbers (Markdown)."""
    m, c = world.machines, world.catalog
    end = world.date_of(world.horizon_days)
    params = provenance.get("export", {})
    sites = m.groupby("site_type", sort=False).size()
    lines = [
        f"# World bundle `{world.name}`",
        "",
        "A frozen AutoVend world: the network, catalog, demand parameters, weather and calendar that the",
        "simulator loads. Do not edit these files: `autovend.world.bundle.load_world` checks every file",
        "against `manifest.json` and refuses a changed bundle. Re-export instead:",
        "",
        "```",
        str(provenance.get("command", "autovend export-world CALIBRATION_DIR SOURCE_DIR -o worlds/NAME")),
        "```",
        "",
        "## Origin",
        "",
        f"- source: `{provenance.get('source_name', '')}`, content hash `{provenance.get('source_hash', '')}`",
        f"- calibration content hash `{provenance.get('calibration_hash', '')}`",
        f"- made by autovend {__version__}, bundle schema {SCHEMA_VERSION}; export seed {params.get('seed')}",
        "",
        "## Numbers",
        "",
        f"- horizon: {world.horizon_days} days, {world.start_date.isoformat()} to {end.isoformat()}, "
        f"{world.timezone} ({world.country})",
        f"- devices: {world.n_machines} ("
        + ", ".join(f"{n} {s}" for s, n in sites.items())
        + f"), capacity {int(m['capacity'].iloc[0]) if len(m) else 0} units each",
        f"- catalog: {world.n_products} products in {c['category_l2'].nunique()} subcategories ("
        + ", ".join(f"{n} {k}" for k, n in c["category_l1"].value_counts().sort_index().items())
        + ")",
        f"- unit costs from the source: {_count(c, 'unit_cost_source', 'source')}; drawn in the "
        f"margin band: {_count(c, 'unit_cost_source', 'margin_draw')}",
        "- shelf lives: "
        + ", ".join(f"{n} x {d} days" for d, n in c["shelf_life_days"].value_counts().sort_index().items()),
        f"- demand: eta {world.demand.eta}, phi {world.demand.phi}, price elasticities "
        + ", ".join(f"{s} {world.demand.elasticity[s]}" for s in sites.index),
        f"- shock: sigma {world.shock_sigma:.4f}, rho {world.shock_rho:.4f}",
        f"- weather: daily maximum {_fmt_range(world.weather['t_max_c'])} C, "
        f"{int((world.weather['precip_mm'] >= 1.0).sum())} days with >= 1 mm; forecasts "
        f"{int(world.forecast['lead'].max()) if len(world.forecast) else 0} days ahead",
        f"- calendar: {len(world.calendar)} days, {len(horizon_holidays(world))} holidays or makeup "
        "workdays in the horizon",
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
        f"  identity) and `manifest_hash`. Estimates are rounded to {SIGNIFICANT_DIGITS} significant digits, so the",
        "  world rebuilds to the same hash on any CPU",
        "",
        "`base_attraction.parquet` holds b in long form (device_id, sku_id, b): devices in device order,",
        "products in catalog order within each device. Capacities are set to the benchmark's; b and U are",
        "the calibrated values of the source machines, unchanged even where a source machine held another",
        "number of units.",
        "",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- export


def summarize(world: World, manifest: dict[str, Any]) -> dict[str, Any]:
    """Plain-Python summary of a loaded bundle for `autovend world info` (sections of label -> value)."""
    m, c = world.machines, world.catalog
    end = world.date_of(world.horizon_days)
    wx = world.weather
    wx_dates = pd.to_datetime(wx["date"]).dt.date
    in_h = wx[(wx_dates >= world.start_date) & (wx_dates <= end)]
    devices = [
        {
            "device_id": str(r["device_id"]),
            "location": str(r["location"]),
            "site_type": str(r["site_type"]),
            "source_machine_id": str(r.get("source_machine_id", "")),
            "kappa_source": str(r.get("kappa_source", "")),
        }
        for _, r in m.iterrows()
    ]
    by_site: dict[str, list[str]] = {}
    for d in devices:
        by_site.setdefault(d["site_type"], []).append(d["source_machine_id"])
    hol = horizon_holidays(world)
    return {
        "bundle": {
            "name": world.name,
            "schema_version": manifest["schema_version"],
            "created_by": manifest["created_by"],
            "world_hash": manifest["world_hash"],
            "source_hash": manifest["source_hash"],
            "calibration_hash": manifest["calibration_hash"],
            "source_name": manifest["params"].get("source_name", ""),
            "export_seed": manifest["params"].get("export", {}).get("seed"),
        },
        "horizon": {
            "start": world.start_date.isoformat(),
            "end": end.isoformat(),
            "days": world.horizon_days,
            "timezone": world.timezone,
            "country": world.country,
            "calendar_end": pd.to_datetime(world.calendar["date"]).max().date().isoformat(),
        },
        "devices": devices,
        "sources_by_site": by_site,
        "capacity": sorted({int(x) for x in m["capacity"]}),
        "catalog": {
            "products": world.n_products,
            "subcategories": int(c["category_l2"].nunique()),
            "by_category": {str(k): int(v) for k, v in c["category_l1"].value_counts().sort_index().items()},
            "shelf_lives": {int(k): int(v) for k, v in c["shelf_life_days"].value_counts().sort_index().items()},
            "margin_by_category": {
                str(k): (float(v.min()), float(v.max()))
                for k, v in (1.0 - c["unit_cost"] / c["ref_price"]).groupby(c["category_l1"], sort=True)
            },
        },
        "weather": {
            "t_max_c": (float(in_h["t_max_c"].min()), float(in_h["t_max_c"].max())),
            "precip_total_mm": float(in_h["precip_mm"].sum()),
            "wet_days": int((in_h["precip_mm"] >= 1.0).sum()),
            "forecast_days": int(world.forecast["lead"].max()) if len(world.forecast) else 0,
        },
        "holidays": [
            (
                pd.Timestamp(r.date).date().isoformat(),
                str(r.holiday_name) or "makeup workday",
                bool(r.is_workday),
            )
            for r in hol.itertuples(index=False)
        ],
        "demand": {
            "eta": world.demand.eta,
            "phi": world.demand.phi,
            "elasticity": {s: world.demand.elasticity[s] for s in dict.fromkeys(m["site_type"].astype(str))},
            "sigma": world.shock_sigma,
            "rho": world.shock_rho,
            "b_total": float(world.base_attraction.sum()),
            "U_range": (float(m["U"].min()), float(m["U"].max())),
        },
        "economics": world.economics.model_dump(mode="json"),
    }

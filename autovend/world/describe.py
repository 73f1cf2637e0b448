"""Describing a loaded world: the summary `autovend world info` prints (the README is written at export)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from autovend.world.model import World


def horizon_holidays(world: World) -> pd.DataFrame:
    """Calendar rows of the horizon that are holidays or makeup workdays (date, is_workday, holiday_name)."""
    cal = world.calendar
    dates = pd.to_datetime(cal["date"]).dt.date
    end = world.date_of(world.horizon_days)
    in_horizon = (dates >= world.start_date) & (dates <= end)
    makeup = cal["is_workday"].astype(bool) & (pd.to_datetime(cal["date"]).dt.day_of_week >= 5)
    rows = cal[in_horizon & ((cal["day_type"] == "holiday") | makeup)]
    return rows[["date", "is_workday", "holiday_name"]].reset_index(drop=True)


# ---------------------------------------------------------------------------------------------- export


def summarize(world: World, manifest: dict[str, Any]) -> dict[str, Any]:
    """Plain-Python summary of a loaded bundle for `autovend world info` (sections of label -> value)."""
    m, c, dm = world.machines, world.catalog, world.demand_model
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
            "eta": dm.settings.eta,
            "phi": dm.settings.phi,
            "elasticity": {s: dm.settings.elasticity[s] for s in dict.fromkeys(m["site_type"].astype(str))},
            "sigma": dm.shock.sigma,
            "rho": dm.shock.rho,
            "b_total": float(dm.b.sum()),
            "U_range": (float(dm.U.min()), float(dm.U.max())),
        },
        "economics": world.economics.model_dump(mode="json"),
    }

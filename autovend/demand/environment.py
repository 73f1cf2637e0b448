"""The environment multiplier E_{m,k,t} of eq. (2): temperature, rain and calendar effects."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.demand.settings import DAY_TYPES, EnvironmentSettings

FloatArray = npt.NDArray[np.float64]


def rain_level(precip_mm: float, settings: EnvironmentSettings) -> str:
    """'dry', 'light' or 'heavy' for a day's precipitation."""
    if precip_mm >= settings.rain.heavy_mm:
        return "heavy"
    if precip_mm >= settings.rain.light_mm:
        return "light"
    return "dry"


def environment_multiplier(
    settings: EnvironmentSettings,
    site_types: npt.ArrayLike,
    category_l1: npt.ArrayLike,
    t_max_c: float | None,
    precip_mm: float | None,
    day_type: str,
) -> FloatArray:
    """E for one day: an (M, K) array over machines (by site type) and products (by category_l1).

    `t_max_c=None` and `precip_mm=None` mean neutral weather (multiplier 1); `day_type` is one of
    workday, weekend, holiday.
    """
    if day_type not in DAY_TYPES:
        raise ValueError(f"day_type must be one of {DAY_TYPES}, got {day_type!r}")
    sites = np.asarray(site_types)
    cats = np.asarray(category_l1)
    temp = settings.temperature
    if t_max_c is None:
        cat_mult = np.ones(len(cats))
    else:
        gap = float(np.clip(t_max_c - temp.reference_c, -temp.max_gap_c, temp.max_gap_c))
        slopes = np.array([temp.slope_per_c.get(c, 0.0) for c in cats], dtype=float)
        cat_mult = np.exp(slopes * gap)
    if day_type == "holiday":
        cat_mult = cat_mult * np.array([settings.calendar.holiday_category.get(c, 1.0) for c in cats], dtype=float)
    level = "dry" if precip_mm is None else rain_level(precip_mm, settings)
    site_mult = np.array(
        [
            settings.calendar.day_type[s][day_type]
            * (1.0 if level == "dry" else getattr(settings.rain, level).get(s, 1.0))
            for s in sites
        ],
        dtype=float,
    )
    return site_mult[:, None] * cat_mult[None, :]

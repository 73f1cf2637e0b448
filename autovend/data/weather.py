"""Seeded daily weather from monthly climate normals, and noisy forecasts of it."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.rng import stream

WEATHER_COLUMNS = ["date", "t_max_c", "precip_mm"]


@dataclass(frozen=True)
class ClimateNormals:
    """Monthly normals (index 0 = January): mean daily maximum, total precipitation, days with >= 1 mm."""

    name: str
    t_max_c: tuple[float, ...]
    precip_mm: tuple[float, ...]
    wet_days: tuple[float, ...]
    t_anomaly_sd: float = 3.0  # °C; day-to-day anomaly around the seasonal normal
    t_anomaly_ar: float = 0.7  # lag-one persistence of the anomaly
    wet_persistence: float = 0.3  # P(wet | wet yesterday) = p + wet_persistence * (1 - p)


# Shanghai (Xujiahui), rounded 1991-2020 normals; approximate, for a plausible seeded series.
SHANGHAI = ClimateNormals(
    name="Shanghai",
    t_max_c=(8.6, 10.8, 14.9, 20.6, 25.6, 28.6, 33.0, 32.4, 28.5, 23.6, 18.1, 11.4),
    precip_mm=(76, 63, 95, 78, 91, 220, 170, 205, 110, 62, 56, 45),
    wet_days=(9, 9, 11, 10, 10, 13, 11, 12, 9, 6, 7, 7),
)


def _seasonal(values: tuple[float, ...], dates: pd.DatetimeIndex) -> np.ndarray:
    """Interpolate monthly values (placed mid-month) to each date, periodic over the year."""
    mids = np.array([15.2 + 30.4 * i for i in range(12)])
    doy = dates.day_of_year.to_numpy().astype(float)
    xs = np.concatenate([mids - 365.0, mids, mids + 365.0])
    ys = np.tile(np.asarray(values, dtype=float), 3)
    return np.interp(doy, xs, ys)


def daily_weather(start: dt.date, end: dt.date, seed: int, normals: ClimateNormals = SHANGHAI) -> pd.DataFrame:
    """A daily series (date, t_max_c, precip_mm) for [start, end] drawn from `normals` under `seed`.

    t_max = seasonal normal + AR(1) anomaly; wet days follow a two-state Markov chain whose
    stationary wet share is the month's wet-day share; wet-day amounts are 1 mm plus a gamma draw
    whose mean matches the month's total. Values are rounded to 0.1.
    """
    dates = pd.date_range(start, end, freq="D")
    n = len(dates)
    rng = stream(seed, "weather", normals.name, start.isoformat())
    t_norm = _seasonal(normals.t_max_c, dates)
    eps = rng.standard_normal(n)
    anom = np.empty(n)
    a = normals.t_anomaly_ar
    anom[0] = normals.t_anomaly_sd * eps[0]
    for i in range(1, n):
        anom[i] = a * anom[i - 1] + normals.t_anomaly_sd * np.sqrt(1 - a * a) * eps[i]
    days_in_month = dates.days_in_month.to_numpy()
    month = dates.month.to_numpy() - 1
    p_wet = np.asarray(normals.wet_days, dtype=float)[month] / days_in_month
    p_ww = p_wet + normals.wet_persistence * (1 - p_wet)
    p_wd = p_wet * (1 - p_ww) / (1 - p_wet)
    u = rng.random(n)
    wet = np.empty(n, dtype=bool)
    wet[0] = u[0] < p_wet[0]
    for i in range(1, n):
        wet[i] = u[i] < (p_ww[i] if wet[i - 1] else p_wd[i])
    mean_amount = np.asarray(normals.precip_mm, dtype=float)[month] / np.asarray(normals.wet_days, dtype=float)[month]
    shape = 0.8
    amounts = 1.0 + rng.gamma(shape, np.maximum(mean_amount - 1.0, 0.1) / shape, size=n)
    precip = np.where(wet, amounts, 0.0)
    return pd.DataFrame({"date": dates, "t_max_c": np.round(t_norm + anom, 1), "precip_mm": np.round(precip, 1)})


def forecast_weather(actual: pd.DataFrame, seed: int, horizon: int = 7) -> pd.DataFrame:
    """Forecasts issued each day for the next `horizon` days.

    Columns: issue_date, target_date, lead, t_max_c, precip_mm.

    Errors grow with lead time: t_max error sd 0.8 + 0.35*lead °C; precipitation is scaled by a
    lognormal factor and a wet/dry call flips with probability 0.04*lead. Lead 0 is the actual value.
    """
    rng = stream(seed, "forecast")
    dates = pd.to_datetime(actual["date"]).reset_index(drop=True)
    t = actual["t_max_c"].to_numpy(dtype=float)
    p = actual["precip_mm"].to_numpy(dtype=float)
    rows = []
    n = len(dates)
    for i in range(n):
        for lead in range(horizon + 1):
            j = i + lead
            if j >= n:
                break
            if lead == 0:
                tf, pf = t[j], p[j]
            else:
                tf = t[j] + rng.normal(0.0, 0.8 + 0.35 * lead)
                wet = p[j] > 0
                if rng.random() < 0.04 * lead:
                    wet = not wet
                pf = (p[j] if p[j] > 0 else 3.0) * float(np.exp(rng.normal(0.0, 0.25 * lead))) if wet else 0.0
            rows.append((dates[i], dates[j], lead, round(float(tf), 1), round(float(pf), 1)))
    return pd.DataFrame(rows, columns=["issue_date", "target_date", "lead", "t_max_c", "precip_mm"])

"""Climate normals a world's seeded weather is drawn from (`autovend.data.weather.daily_weather`).

A world's weather is synthetic: a seeded series around monthly normals, so that the agent's forecasts
and the environment multipliers behave as in the source's climate without shipping a weather record.
The normals are borrowed from public climatologies (rounded 1991-2020 monthly means, approximate), named
by the export's `climate` setting; or computed from the source's own weather table (`climate: source`); or
read from a normals file (`climate: FILE.csv`). A named climate must be of the world's country
(`resolve_climate`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from autovend.data.weather import SHANGHAI, ClimateNormals
from autovend.errors import ExportError

# New York City (Central Park), for sources in the New York - New Jersey area.
NEW_YORK = ClimateNormals(
    name="NewYork",
    t_max_c=(4.2, 5.7, 9.9, 16.6, 21.9, 26.5, 29.4, 28.5, 24.6, 18.1, 12.2, 6.8),
    precip_mm=(92, 81, 109, 104, 101, 115, 117, 116, 109, 111, 91, 111),
    wet_days=(8, 8, 9, 9, 9, 9, 8, 8, 7, 8, 8, 9),
)
CLIMATES: dict[str, ClimateNormals] = {c.name: c for c in (SHANGHAI, NEW_YORK)}

# The country each named climate lies in: a world whose country differs is refused (a copied params file).
CLIMATE_COUNTRY: dict[str, str] = {"Shanghai": "CN", "NewYork": "US"}
FROM_SOURCE = "source"  # export.climate: normals computed from the source's weather table
NORMALS_COLUMNS = ("month", "t_max_c", "precip_mm", "wet_days")
MIN_DAYS_PER_MONTH = 10  # days of weather a month needs in the source's table to give normals


def known_climates() -> str:
    """The named climates with their countries, for messages: "NewYork (US), Shanghai (CN)"."""
    return ", ".join(f"{name} ({CLIMATE_COUNTRY.get(name, '?')})" for name in sorted(CLIMATES))


def climate_hint(country: str) -> str:
    """What `export.climate` can be, for a world in `country`."""
    own = [n for n, c in CLIMATE_COUNTRY.items() if c == country]
    named = f"the named climate of {country}: {', '.join(own)}" if own else f"no named climate is of {country}"
    return (
        f"set export.climate to '{FROM_SOURCE}' (normals from the source's weather table), to a normals file (CSV: "
        f"{', '.join(NORMALS_COLUMNS)}; 12 rows, one per month), or to a named climate ({named}; known: "
        f"{known_climates()})"
    )


def normals_from_weather(weather: pd.DataFrame, name: str) -> ClimateNormals:
    """Monthly normals from a daily weather table (date, t_max_c, precip_mm): means over the years it covers.

    Each calendar month needs `MIN_DAYS_PER_MONTH` days with both values; a month without is filled from its
    neighbours (circular linear interpolation). Raises ExportError when fewer than 6 months have data.
    """
    w = weather.dropna(subset=["t_max_c", "precip_mm"]).copy()
    w["month"] = pd.to_datetime(w["date"]).dt.month
    counts = w.groupby("month").size()
    months = [m for m in range(1, 13) if counts.get(m, 0) >= MIN_DAYS_PER_MONTH]
    if len(months) < 6:
        raise ExportError(
            f"the source's weather table gives {len(months)} months with {MIN_DAYS_PER_MONTH} or more days of "
            "weather; climate normals need at least 6: give a normals file or a named climate as export.climate"
        )
    g = w[w["month"].isin(months)].groupby("month")
    days_in = {m: pd.Period(f"2001-{m:02d}").days_in_month for m in range(1, 13)}
    t_max = g["t_max_c"].mean()
    precip = g["precip_mm"].mean() * pd.Series(days_in)[t_max.index]
    wet = (g["precip_mm"].apply(lambda s: (s >= 1.0).mean())) * pd.Series(days_in)[t_max.index]

    def full(series: pd.Series) -> tuple[float, ...]:
        xs = np.array(months, dtype=float)
        ys = series.reindex(months).to_numpy(dtype=float)
        grid = np.concatenate([xs - 12, xs, xs + 12])
        vals = np.interp(np.arange(1, 13, dtype=float), grid, np.concatenate([ys, ys, ys]))
        return tuple(round(float(v), 1) for v in vals)

    wet_days = tuple(max(0.5, v) for v in full(wet))
    return ClimateNormals(name=name, t_max_c=full(t_max), precip_mm=full(precip), wet_days=wet_days)


def read_normals(path: Path) -> ClimateNormals:
    """Monthly normals from a CSV file (`NORMALS_COLUMNS`, one row per month 1-12); ExportError in words."""
    try:
        frame = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise ExportError(f"export.climate names the normals file {path}, which cannot be read ({exc})") from None
    missing = [c for c in NORMALS_COLUMNS if c not in frame]
    if missing:
        raise ExportError(f"{path}: the normals file lacks the columns {missing}; it needs {list(NORMALS_COLUMNS)}")
    try:
        frame = frame.astype({c: float for c in NORMALS_COLUMNS})
    except ValueError:
        raise ExportError(f"{path}: every value of {list(NORMALS_COLUMNS)} must be a number") from None
    if sorted(frame["month"].tolist()) != [float(m) for m in range(1, 13)]:
        raise ExportError(f"{path}: give exactly one row per month, month 1 to 12")
    frame = frame.sort_values("month")
    bad = frame[(frame["precip_mm"] < 0) | (frame["wet_days"] <= 0) | (frame["wet_days"] > 31)]
    if len(bad) or not np.isfinite(frame[list(NORMALS_COLUMNS)].to_numpy()).all():
        raise ExportError(f"{path}: precip_mm must be >= 0 and wet_days within (0, 31], every value finite")
    return ClimateNormals(
        name=path.stem,
        t_max_c=tuple(frame["t_max_c"]),
        precip_mm=tuple(frame["precip_mm"]),
        wet_days=tuple(frame["wet_days"]),
    )


def resolve_climate(
    climate: str, country: str, weather: pd.DataFrame | None, base: Path | None = None
) -> ClimateNormals:
    """The normals export.climate names for a world in `country` (see `climate_hint`); ExportError in words.

    A named climate must be of the world's country: a params file copied from another source would otherwise
    give its climate silently. 'source' reads the source's weather table (`weather`); a value ending in .csv is
    a normals file (relative to `base`, the folder the command runs in, when not absolute).
    """
    if climate == FROM_SOURCE:
        if weather is None or weather.empty:
            raise ExportError(
                f"export.climate is '{FROM_SOURCE}' but the source has no weather table; {climate_hint(country)}"
            )
        return normals_from_weather(weather, f"{FROM_SOURCE}-{country}")
    if climate.endswith(".csv"):
        path = Path(climate)
        return read_normals(path if path.is_absolute() or base is None else base / path)
    if climate not in CLIMATES:
        raise ExportError(f"export.climate {climate!r} is no known climate; {climate_hint(country)}")
    if CLIMATE_COUNTRY.get(climate) != country:
        raise ExportError(
            f"export.climate is {climate!r}, a climate of {CLIMATE_COUNTRY.get(climate)}, but the world's country is "
            f"{country} (source.yaml, or export.country): a params file copied from another source? "
            f"{climate_hint(country)}"
        )
    return CLIMATES[climate]

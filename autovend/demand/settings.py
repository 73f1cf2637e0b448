"""Benchmark settings of the demand model: fixed by design, never estimated (paper §3.3).

Site types are open: a source may name its own (`hospital`, `school`). The per-site-type settings
(price elasticity, rain and calendar multipliers) are `SiteTable`s: a site type without an entry of its
own reads the pooled entry, `unknown` (POOLED_SITE_TYPE), or the neutral value 1 where a rain or
calendar table has no `unknown` entry. `DemandSettings.site_types_without_settings` names the site
types that fell back, for the calibration report and the world README.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from autovend.config import load_section

SITE_TYPES: tuple[str, ...] = (
    "worksite",
    "campus",
    "residential",
    "commercial",
    "office",
    "public",
    "unknown",
)
POOLED_SITE_TYPE = "unknown"  # the entry a site type without settings of its own reads
DAY_TYPES: tuple[str, ...] = ("workday", "weekend", "holiday")
RAIN_LEVELS: tuple[str, ...] = ("dry", "light", "heavy")
_NEUTRAL_DAY_TYPE: dict[str, float] = dict.fromkeys(DAY_TYPES, 1.0)

DayType = Literal["workday", "weekend", "holiday"]
V = TypeVar("V")


class SiteTable(dict[str, V]):
    """A per-site-type mapping in which a site type without its own entry reads the pooled one.

    `table[site]` and `table.get(site, default)` give the site's own entry, else the `unknown` entry,
    else `neutral` (if set; `get` then falls back to `default`). `site in table` and iteration see own
    entries only, so a table serialises exactly as the mapping it was built from.
    """

    def __init__(self, entries: dict[str, V], neutral: V | None = None) -> None:
        super().__init__(entries)
        self.neutral = neutral

    def pooled(self) -> V | None:
        """The value a site type without its own entry reads (None if the table has none)."""
        if POOLED_SITE_TYPE in self:
            return dict.__getitem__(self, POOLED_SITE_TYPE)
        return self.neutral

    def __missing__(self, key: str) -> V:
        value = self.pooled()
        if value is None:
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        """The site's own entry, else the pooled one, else `default`."""
        if key in self:
            return dict.__getitem__(self, key)
        value = self.pooled()
        return default if value is None else value


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TemperatureSettings(_Frozen):
    """Attraction multiplier exp(slope[category_l1] * (t_max - reference_c)), the gap capped at ±max_gap_c."""

    reference_c: float = 21.0  # °C; the neutral daily maximum (about Shanghai's annual mean)
    max_gap_c: float = 15.0  # °C; larger gaps count as this gap
    slope_per_c: dict[str, float] = Field(
        default_factory=lambda: {"drinks": 0.022, "snacks": -0.004}
    )  # per °C; categories not listed have slope 0


class RainSettings(_Frozen):
    """Attraction multiplier by site type for light (>= light_mm) and heavy (>= heavy_mm) rain."""

    light_mm: float = 1.0
    heavy_mm: float = 10.0
    light: dict[str, float] = Field(
        default_factory=lambda: {
            "worksite": 1.00,
            "campus": 0.96,
            "residential": 1.04,
            "commercial": 0.88,
            "office": 0.97,
            "public": 0.92,
            "unknown": 1.00,
        },
        validate_default=True,  # so the defaults become SiteTables too
    )  # site types without an entry: the `unknown` entry, else 1
    heavy: dict[str, float] = Field(
        default_factory=lambda: {
            "worksite": 0.95,
            "campus": 0.90,
            "residential": 1.08,
            "commercial": 0.75,
            "office": 0.92,
            "public": 0.82,
            "unknown": 1.00,
        },
        validate_default=True,  # so the defaults become SiteTables too
    )  # site types without an entry: the `unknown` entry, else 1

    @field_validator("light", "heavy")
    @classmethod
    def _pooled(cls, v: dict[str, float]) -> SiteTable[float]:
        return SiteTable(v, neutral=1.0)


class CalendarSettings(_Frozen):
    """Attraction multiplier by site type and day type, times a category modifier on holidays."""

    day_type: dict[str, dict[str, float]] = Field(
        default_factory=lambda: {
            "worksite": {"workday": 1.0, "weekend": 0.55, "holiday": 0.40},
            "campus": {"workday": 1.0, "weekend": 0.80, "holiday": 0.50},
            "residential": {"workday": 1.0, "weekend": 1.15, "holiday": 1.25},
            "commercial": {"workday": 1.0, "weekend": 1.30, "holiday": 1.45},
            "office": {"workday": 1.0, "weekend": 0.40, "holiday": 0.30},
            "public": {"workday": 1.0, "weekend": 1.10, "holiday": 1.10},
            "unknown": {"workday": 1.0, "weekend": 1.0, "holiday": 1.0},
        },
        validate_default=True,  # so the defaults become SiteTables too
    )  # site types without an entry: the `unknown` entry, else 1 on every day type
    holiday_category: dict[str, float] = Field(
        default_factory=lambda: {"drinks": 1.0, "snacks": 1.10}
    )  # extra multiplier on holidays by category_l1; categories not listed: 1

    @field_validator("day_type")
    @classmethod
    def _all_day_types(cls, v: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        for site, row in v.items():
            missing = set(DAY_TYPES) - set(row)
            if missing:
                raise ValueError(f"calendar.day_type.{site} lacks {sorted(missing)}")
        return SiteTable(v, neutral=dict(_NEUTRAL_DAY_TYPE))


class EnvironmentSettings(_Frozen):
    """The multiplier E_{m,k,t} of eq. (2): temperature x rain x calendar."""

    temperature: TemperatureSettings = Field(default_factory=TemperatureSettings)
    rain: RainSettings = Field(default_factory=RainSettings)
    calendar: CalendarSettings = Field(default_factory=CalendarSettings)


class DemandSettings(_Frozen):
    """Settings of eq. (2)-(3) that the benchmark fixes: fill exponent, facing threshold, elasticities."""

    eta: float = Field(0.5, ge=0.0)  # fill exponent on F_{m,t}
    phi: float = Field(5.0, gt=0.0)  # units; facing threshold
    elasticity: dict[str, float] = Field(
        default_factory=lambda: {
            "worksite": 2.8,
            "campus": 3.5,
            "residential": 3.0,
            "commercial": 2.4,
            "office": 2.6,
            "public": 2.9,
            "unknown": 2.9,
        },
        validate_default=True,  # so the defaults become SiteTables too
    )  # site-type price elasticities, within 2.4-3.5 (paper §3.3); other site types: the `unknown` entry
    environment: EnvironmentSettings = Field(default_factory=EnvironmentSettings)

    @field_validator("elasticity")
    @classmethod
    def _all_sites(cls, v: dict[str, float]) -> SiteTable[float]:
        missing = set(SITE_TYPES) - set(v)
        if missing:
            raise ValueError(f"elasticity lacks site types {sorted(missing)}")
        return SiteTable(v)

    def elasticity_of(self, site_types: Any) -> Any:
        """Vector of elasticities for an array of site types (the pooled `unknown` one for unlisted types)."""
        import numpy as np

        return np.array([self.elasticity[s] for s in site_types], dtype=float)

    def site_types_without_settings(self, site_types: Iterable[str]) -> tuple[str, ...]:
        """The distinct `site_types` (sorted) lacking an own entry in a per-site-type table: they use the pooled one.

        The tables are the elasticities, the light and heavy rain multipliers and the calendar multipliers.
        """
        env = self.environment
        tables = (self.elasticity, env.rain.light, env.rain.heavy, env.calendar.day_type)
        return tuple(sorted({str(s) for s in site_types if any(str(s) not in t for t in tables)}))


def load_demand_settings(path: str | Path | None = None) -> DemandSettings:
    """Read the `demand` section of a params YAML file; defaults when `path` is None."""
    return load_section(DemandSettings, path, "demand")

"""Benchmark settings of the demand model: fixed by design, never estimated (paper §3.3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

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
DAY_TYPES: tuple[str, ...] = ("workday", "weekend", "holiday")
RAIN_LEVELS: tuple[str, ...] = ("dry", "light", "heavy")

DayType = Literal["workday", "weekend", "holiday"]


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
        }
    )
    heavy: dict[str, float] = Field(
        default_factory=lambda: {
            "worksite": 0.95,
            "campus": 0.90,
            "residential": 1.08,
            "commercial": 0.75,
            "office": 0.92,
            "public": 0.82,
            "unknown": 1.00,
        }
    )


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
        }
    )
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
        return v


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
        }
    )  # site-type price elasticities, within 2.4-3.5 (paper §3.3)
    environment: EnvironmentSettings = Field(default_factory=EnvironmentSettings)

    @field_validator("elasticity")
    @classmethod
    def _all_sites(cls, v: dict[str, float]) -> dict[str, float]:
        missing = set(SITE_TYPES) - set(v)
        if missing:
            raise ValueError(f"elasticity lacks site types {sorted(missing)}")
        return v

    def elasticity_of(self, site_types: Any) -> Any:
        """Vector of elasticities for an array of site types."""
        import numpy as np

        return np.array([self.elasticity[s] for s in site_types], dtype=float)


def load_demand_settings(path: str | Path | None = None) -> DemandSettings:
    """Read the `demand` section of a params YAML file; defaults when `path` is None."""
    return load_section(DemandSettings, path, "demand")

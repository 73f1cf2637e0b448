"""The `export` section of a source's params file: how a calibration becomes a world (DVC params)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from autovend.config import load_section
from autovend.export.catalog import DEFAULT_MARGINS, OTHER_MARGIN
from autovend.export.climate import CLIMATES, FROM_SOURCE, known_climates
from autovend.export.network import MAX_CAPACITY, MIN_DAYS
from autovend.world.model import Economics


class ExportParams(BaseModel):
    """Export settings; None means "from the source" where the source says (capacity, country, time zone)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = Field(20250101, ge=0)  # network draw, margin draws, weather and forecasts
    start: dt.date = dt.date(2025, 1, 1)  # day 1 of the episode (paper: 2025-01-01)
    # climate normals of the seeded weather (autovend.export.climate): a named climate of the world's country,
    # "source" (the source's weather table) or a normals CSV file
    climate: str = "Shanghai"
    country: str | None = None  # public holidays and makeup workdays; None: the source's
    timezone: str | None = None  # None: the source's
    calendar_language: str | None = None  # language of holiday names; None: the calendar library's default
    capacity: int | None = Field(None, ge=1, le=MAX_CAPACITY)  # units per device; None: the network file's, else source
    min_days: int = Field(MIN_DAYS, ge=0)  # days of records a preferred source machine has
    forecast_days: int = Field(7, ge=0)  # the agent sees this many days ahead
    calendar_lookahead_days: int = Field(400, ge=0)  # get_calendar looks this far past any day
    calendar_margin_days: int = Field(35, ge=0)  # extra calendar days beyond that
    margins: dict[str, tuple[float, float]] = Field(default_factory=lambda: dict(DEFAULT_MARGINS))
    other_margin: tuple[float, float] = OTHER_MARGIN  # categories without a band in `margins`
    # Value of one unit of the economics' currency (the benchmark's rules are in CNY) in the source's
    # currency; needed when they differ: start cash, fees, rents and fines are converted and rounded
    # to the source currency's cents.
    economics_rate: float | None = Field(None, gt=0)

    @field_validator("climate")
    @classmethod
    def _known_climate(cls, v: str) -> str:
        if v not in CLIMATES and v != FROM_SOURCE and not v.endswith(".csv"):
            raise ValueError(
                f"unknown climate {v!r}: give a named climate ({known_climates()}), '{FROM_SOURCE}' (normals from the "
                "source's weather table) or a normals file ending in .csv (month, t_max_c, precip_mm, wet_days)"
            )
        return v

    @field_validator("margins")
    @classmethod
    def _bands(cls, v: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
        for cat, (lo, hi) in v.items():
            if not 0.0 <= lo <= hi < 1.0:
                raise ValueError(f"margins.{cat} must be [low, high] with 0 <= low <= high < 1")
        return v


def load_export_params(path: str | Path | None) -> ExportParams:
    """Read the `export` section of a params YAML file; defaults when `path` is None."""
    return load_section(ExportParams, path, "export")


def load_economics(path: str | Path | None) -> Economics:
    """Read the `economics` section of a benchmark settings YAML file; defaults when `path` is None."""
    return load_section(Economics, path, "economics")

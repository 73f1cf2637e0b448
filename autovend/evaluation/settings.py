"""Settings of the evaluation: checkpoints, windows, the price grid and the failure detectors' thresholds."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class EvalSettings(BaseModel):
    """Documented defaults of every evaluation choice (days are simulation days, 1-based, inclusive)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    checkpoint_every: int = Field(30, ge=1)  # days; assortment and reassignment checkpoints at 30, 60, ..., <= T
    env_window_days: int = Field(30, ge=1)  # days; a checkpoint's environment = mean E of the days ending there
    price_grid_step: float = Field(0.05, gt=0.0)  # x reference price; the price search grid spans the price band
    pricing_stride: int = Field(5, ge=1)  # price search on the machine-days with (day + machine) % stride == 0
    pricing_max_rounds: int = Field(12, ge=0)  # rounds of per-product best responses after the common-level search
    execution_from_day: int = Field(16, ge=1)  # availability and visit cycles count from this day (paper §5.4)
    early_window: tuple[int, int] = (16, 45)  # feedback: early period (paper §5.5)
    late_window: tuple[int, int] = (136, 165)  # feedback: late period
    retry_window_days: int = Field(7, ge=0)  # an insufficient-stock restock retried within this many days
    dead_stock_window_days: int = Field(30, ge=1)  # no network sale of the SKU in this many days before an order
    dead_stock_min_units: int = Field(1, ge=1)  # ... while the warehouse holds at least this many unexpired units
    max_examples: int = Field(5, ge=0)  # examples kept per failure mode

    @model_validator(mode="after")
    def _windows(self) -> EvalSettings:
        for name in ("early_window", "late_window"):
            first, last = getattr(self, name)
            if not 1 <= first <= last:
                raise ValueError(f"{name} must be (first, last) with 1 <= first <= last, got {(first, last)}")
        return self

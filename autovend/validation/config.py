"""Parameters of the validation stage (DVC params `validate`)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from autovend.config import load_section


class ValidationConfig(BaseModel):
    """Held-out validation settings (paper §3.3: eight-week window, 100 seeds)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    test_weeks: int = Field(8, ge=1)  # the last weeks of the records are the test window
    seeds: int = Field(100, ge=1)  # replay draws
    seed: int = 0  # base seed of the replay streams
    persistence_weeks: int = Field(4, ge=1)  # the persistence reference's look-back
    other_share: float = Field(0.005, ge=0)  # subcategories below this realised share pool into Other (figure only)
    min_machine_days: int = Field(28, ge=1)  # a machine needs this many training days to be evaluated
    limits: str = ""  # what limits this source's numbers, written into validation.md
    shelf_weeks: int = Field(4, ge=1)  # sales-only machines: the pre-window assortment's look-back
    include_sales_only: bool = False  # with inventory records: also score the sales-only machines (mixed)
    bootstrap: int = Field(2000, ge=100)  # bootstrap resamples (of machines; of test weeks below 3 machines)
    level: Literal["backtest", "off"] = "backtest"  # follow recent machine levels when backtests say so


def load_validation_config(path: str | Path | None, section: str = "validate") -> ValidationConfig:
    """Read a section of a params YAML file; defaults when `path` is None."""
    return load_section(ValidationConfig, path, section)

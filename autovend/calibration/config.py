"""Parameters of the calibration stage (DVC params `calibrate`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from autovend.config import load_section


class CalibrationConfig(BaseModel):
    """Choices the paper leaves open, each documented where it is used."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    keep_subcategories: list[str] | None = None  # None: keep every subcategory of the source
    sales_rule_gap_days: int = Field(14, ge=1)  # G: a product is offered between sales at most G days apart
    until: dt.date | None = None  # use only records before this date (validation's training window)
    min_panel_days: int = Field(14, ge=1)  # a source needs at least this many days of records
    min_machine_days_u: int = Field(28, ge=2)  # days of known shelves a machine needs to inform u
    min_machines_u: int = Field(2, ge=1)
    min_machine_days_shock: int = Field(28, ge=8)  # days a machine needs to inform r and rho
    mm_iterations: int = Field(2000, ge=1)  # cap on the choice-model (MM) iterations per EM round
    # MM stops when no omega, pi or gamma moves by more than this relative amount in one sweep: far below
    # the exported precision (autovend.canonical), so a 1-ulp difference upstream cannot reach an export
    mm_tolerance: float = Field(1e-12, gt=0)
    mm_pseudo_units: float = Field(0.01, ge=0)  # prior pseudo-units per product that keep every omega finite
    em_rounds: int = Field(4, ge=0)  # censored-demand EM rounds around the MM fit
    # EM rounds of the latent availability of sales-only sources (autovend.calibration.availability)
    availability_rounds: int = Field(12, ge=1)
    u_bounds: tuple[float, float] = (1e-4, 10.0)
    u_fallback: float | None = 0.0638 * 0.318 / (1 - 0.318)  # paper's u, used when u is not identified
    # paper's x: the typical real shelf's attraction over the reference shelf's, the level given to shelves
    # estimated from sales alone (their fill and facings are not observed: autovend.calibration.u_profile)
    x_prior: float = Field(0.0638, gt=0, lt=1)
    min_exposure_report: float = 30.0  # machine-days of exposure for the "well exposed" product set
    # prior that shrinks omega (autovend.calibration.drop_prior.popularity_by_prior): "subcategory" (default),
    # "exposure" (prior scaled by exposure) or "dropped" (own prior variance for products the operator dropped)
    popularity_prior: Literal["subcategory", "exposure", "dropped"] = "subcategory"

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The fields; `popularity_prior` only when it is not the default, so default params dump as before."""
        out = handler(self)
        if out.get("popularity_prior") == "subcategory":
            del out["popularity_prior"]
        return out


def load_calibration_config(path: str | Path | None, section: str = "calibrate") -> CalibrationConfig:
    """Read a section of a params YAML file; defaults when `path` is None."""
    return load_section(CalibrationConfig, path, section)

"""`Estimates`: the typed scalars a calibration hands downstream (the world export, reports).

A calibration keeps every scalar it computed, diagnostics included, in `CalibrationResult.scalars`
(the dict that calibration.json stores and the content hash covers). What the rest of the pipeline
uses of them is this one frozen, validated object, read with `CalibrationResult.estimates`:

    est = calibration.estimates
    est.rho, est.sigma, est.u        # floats, finite, checked once here

so a parameter such as rho travels estimator -> `Estimates.rho` -> `ShockProcess.rho` of the world's
`DemandModel` -> the simulator's shock path, one typed field per layer. A scalar that is missing or not
finite is an `EstimatesError` naming it, not a KeyError or a NaN in a world.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from autovend.calibration.identification import Identification
from autovend.errors import AutoVendError

ESTIMATORS_KNOWN = ("structural", "paper")


class EstimatesError(AutoVendError):
    """A calibration's scalars lack a downstream estimate or hold a non-finite one."""


class Estimates(BaseModel):
    """The demand scalars of a calibration (definitions: autovend.calibration and the paper, appendix A).

    u: no-purchase weight per unit of machine scale; x: purchase share of a typical shelf; e: share of
    purchases lost when the whole shelf is removed; r: shock overdispersion, sigma = sqrt(ln(1 + 1/r));
    rho: lag-one autocorrelation of the log shock; eta, phi: the benchmark's shelf-fill settings used;
    typical_fill: the fill F of a typical shelf; estimator: which definitions made u, e, r and kappa.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    source_name: str
    source_hash: str
    estimator: Literal["structural", "paper"]
    u: float
    x: float
    e: float
    r: float
    sigma: float
    rho: float
    eta: float
    phi: float
    typical_fill: float
    identification: Identification | None = None

    @field_validator("u", "x", "e", "r", "sigma", "rho", "eta", "phi", "typical_fill")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @classmethod
    def of(cls, scalars: Mapping[str, Any]) -> Estimates:
        """The estimates in a calibration's scalars; `EstimatesError` names what is missing or not finite."""
        fields = {name: scalars.get(name) for name in cls.model_fields if name != "estimator"}
        fields["estimator"] = scalars.get("estimator", "structural")
        fields["source_name"] = str(fields["source_name"] or "")
        fields["source_hash"] = str(fields["source_hash"] or "")
        try:
            return cls.model_validate(fields)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']} (got {err.get('input')!r})"
                for err in exc.errors()
            )
            raise EstimatesError(
                f"the calibration's scalars do not give its estimates: {problems}; re-run `autovend calibrate`"
            ) from None

"""`Estimates`: every scalar of a calibration, typed, as calibration hands it on (to export, reports, validation).

A calibration builds one frozen, validated `Estimates` and keeps it in `CalibrationResult.estimates`;
everything downstream reads its fields:

    est = calibration.estimates
    est.rho, est.sigma, est.u        # floats, finite, checked once here
    est.n_machines, est.notes        # the diagnostics: int, tuple of str (None: the calibration did not record it)

so a parameter such as rho travels estimator -> `Estimates.rho` -> `ShockProcess.rho` of the world's
`DemandModel` -> the simulator's shock path, one typed field per layer. A demand estimate that is missing or
not finite is an `EstimatesError` naming it, not a KeyError or a NaN in a world.

The string-keyed dict is only what calibration.json stores. One writer makes it (`Estimates.stored`: the
fields the calibration set, as JSON, plus the content hash) and one reader takes it back (`read_estimates`,
whose errors name the file and the field), so calibration.json -> `Estimates` -> calibration.json gives the
same bytes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from autovend.calibration.idrecord import Identification
from autovend.demand.settings import DemandSettings
from autovend.errors import AutoVendError

ESTIMATORS_KNOWN = ("structural", "paper")
CALIBRATION_FILE = "calibration.json"
# kept in memory but not written: the MM fit's sweep count moves with the last bits of numpy's SIMD kernels, and
# calibration.json is a DVC output that must be the same bytes on every CPU
UNWRITTEN_SCALARS = frozenset({"choice_iterations"})
# the demand estimates a world or a validation needs: always there, always finite
DEMAND_ESTIMATES = ("u", "x", "e", "r", "sigma", "rho", "eta", "phi", "typical_fill")


class EstimatesError(AutoVendError):
    """A calibration's scalars lack a downstream estimate, hold a non-finite one, or are not a calibration's."""


class Estimates(BaseModel):
    """The scalars of a calibration (definitions: autovend.calibration and the paper, appendix A).

    The demand estimates (required and finite): u: no-purchase weight per unit of machine scale; x: purchase
    share of a typical shelf; e: share of purchases lost when the whole shelf is removed; r: shock
    overdispersion, sigma = sqrt(ln(1 + 1/r)); rho: lag-one autocorrelation of the log shock; eta, phi: the
    benchmark's shelf-fill settings used; typical_fill: the fill F of a typical shelf; estimator: which
    definitions made u, e, r and kappa.

    The rest record how the calibration was made and what it rests on; each is None (or empty) when the
    calibration did not record it, and an estimate the source does not identify (a standard error of a
    borrowed u) is None, written as null. `params` and `settings` are the calibration's inputs, kept as given
    (`demand_settings` reads the latter). Only the fields a calibration set are written back.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # what was calibrated, with what
    schema_version: int | None = None
    code_version: str | None = None
    source_name: str = ""
    source_hash: str = ""
    params: dict[str, Any] | None = None
    settings: dict[str, Any] | None = None
    estimator: Literal["structural", "paper"] = "structural"
    # the demand estimates
    u: float
    x: float
    e: float
    r: float
    sigma: float
    rho: float
    eta: float
    phi: float
    typical_fill: float
    # the no-purchase fit
    u_se: float | None = None
    u_source: str | None = None
    u_at_bound: bool | None = None
    u_machines: int | None = None
    u_machine_days: int | None = None
    u_first_pass: float | None = None
    x_all_machines: float | None = None
    e_se: float | None = None
    e_loglog: float | None = None
    e_loglog_se: float | None = None
    # what the records say about u (`u_profile`): the adjusted 95% profile-likelihood interval (an end is null when
    # the data cannot reject u as far as the search bound), whether it identifies u, the profile's maximum
    u_interval: tuple[float | None, float | None] | None = None
    u_identified: bool | None = None
    u_profile_max: float | None = None
    u_profile_adjustment: float | None = None
    # shelves estimated from sales alone (`availability`): the depletion exponent theta and the level s of their
    # attraction, the EM rounds, the chains' log-likelihood gain of the last round and the mean P(ON) of pair-days
    shelf_depletion: float | None = None
    shelf_level: float | None = None
    availability_rounds: int | None = None
    availability_last_gain: float | None = None
    availability_on_share: float | None = None
    # the shocks
    r_median: float | None = None
    rho_naive_counts: float | None = None
    latent_lag1_corr: float | None = None
    scale_prior_sigma: float | None = None
    # the data and the split
    kept_unit_share: float | None = None
    units_all: int | None = None
    units_kept: int | None = None
    n_machines: int | None = None
    n_machines_inventory: int | None = None
    n_products_kept: int | None = None
    n_subcategories_kept: int | None = None
    n_days: int | None = None
    period: tuple[str, str] | None = None
    demand_to_sales_ratio: float | None = None
    demand_to_sales_ratio_by_machine_sd: float | None = None
    sales_rule_attraction_factor: float | None = None
    sales_rule_scale_factor: float | None = None
    choice_loglik: float | None = None
    choice_iterations: int | None = None  # in memory only (UNWRITTEN_SCALARS)
    notes: tuple[str, ...] = ()
    identification: Identification | None = None

    @field_validator(*DEMAND_ESTIMATES)
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value

    @field_validator(
        "u_se",
        "u_first_pass",
        "x_all_machines",
        "e_se",
        "e_loglog",
        "e_loglog_se",
        "u_profile_max",
        "u_profile_adjustment",
        "shelf_depletion",
        "shelf_level",
        "availability_last_gain",
        "availability_on_share",
        "r_median",
        "rho_naive_counts",
        "latent_lag1_corr",
        "scale_prior_sigma",
        "kept_unit_share",
        "demand_to_sales_ratio",
        "demand_to_sales_ratio_by_machine_sd",
        "sales_rule_attraction_factor",
        "sales_rule_scale_factor",
        "choice_loglik",
    )
    @classmethod
    def _not_infinite(cls, value: float | None) -> float | None:
        if value is not None and math.isinf(value):
            raise ValueError("is infinite (an estimate the source does not identify is null)")
        return value

    @classmethod
    def from_stored(cls, scalars: Mapping[str, Any], *, where: str = "the calibration's scalars") -> Estimates:
        """The estimates in a stored dict (calibration.json's, without its content hash).

        Only the keys present are set, so `stored` writes back the same keys. `EstimatesError` names `where`
        and each field that is missing, not finite or unknown.
        """
        try:
            return cls.model_validate(dict(scalars))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
                + ("" if err["type"] == "missing" else f" (got {err.get('input')!r})")
                for err in exc.errors()
            )
            raise EstimatesError(
                f"{where} do not give the calibration's estimates: {problems}; re-run `autovend calibrate`"
            ) from None

    def stored(self, *, content_hash: str | None = None, written: bool = True) -> dict[str, Any]:
        """The dict calibration.json stores: the fields the calibration set, as JSON data.

        `written` leaves out what is kept in memory only (UNWRITTEN_SCALARS); `content_hash` (of the whole
        calibration, `CalibrationResult.content_hash`) is added when given.
        """
        keys = set(self.model_fields_set) - (UNWRITTEN_SCALARS if written else set())
        out = self.model_dump(mode="json", include=keys)
        if content_hash is not None:
            out["content_hash"] = content_hash
        return out

    def demand_settings(self) -> DemandSettings:
        """The demand settings the calibration was made with (`EstimatesError` when it did not record them)."""
        if self.settings is None:
            raise EstimatesError("the calibration does not record its demand settings; re-run `autovend calibrate`")
        return DemandSettings.model_validate(self.settings)


def read_estimates(path: str | Path) -> Estimates:
    """The estimates of a calibration.json (`path`: the file or its calibration folder).

    `EstimatesError` names the file when it is missing, not JSON, holds NaN or infinity (a stored estimate
    that is not identified is null), or lacks an estimate.
    """
    path = Path(path)
    if path.is_dir():
        path = path / CALIBRATION_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise EstimatesError(f"cannot read {path} ({exc.strerror or exc}); run `autovend calibrate`") from exc

    try:
        scalars = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EstimatesError(f"{path} is not JSON ({exc}); re-run `autovend calibrate`") from exc
    if not isinstance(scalars, dict):
        raise EstimatesError(f"{path} holds no calibration (not a JSON object); re-run `autovend calibrate`")
    bad = sorted(key for key, value in scalars.items() if not _finite_json(value))
    if bad:
        raise EstimatesError(
            f"{path}: {', '.join(bad)} {'is' if len(bad) == 1 else 'are'} NaN or infinite (or hold such a number), "
            "which calibration.json never stores (an estimate the source does not identify is null); "
            "re-run `autovend calibrate`"
        )
    scalars.pop("content_hash", None)
    return Estimates.from_stored(scalars, where=str(path))


def _finite_json(value: Any) -> bool:
    """False when `value` is, or holds, a NaN or infinite number."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite_json(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite_json(v) for v in value)
    return True

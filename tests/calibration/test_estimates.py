"""`Estimates`: the typed demand scalars of a calibration, checked once, as the export reads them."""

from __future__ import annotations

import math

import pytest
from pydantic import ValidationError

from autovend.calibration.estimates import Estimates, EstimatesError
from autovend.calibration.result import CalibrationResult

SCALARS = {
    "source_name": "synthetic-cn",
    "source_hash": "e" * 64,
    "u": 0.0292739,
    "x": 0.0679984,
    "e": 0.300948,
    "r": 2.91293,
    "sigma": 0.543256,
    "rho": 0.186807,
    "eta": 0.5,
    "phi": 5.0,
    "typical_fill": 0.405,
    "choice_loglik": -388933.0,  # a diagnostic: stays in the scalars, not in the estimates
}


def test_the_estimates_are_the_scalars_downstream_uses():
    est = Estimates.of(SCALARS)
    assert (est.u, est.x, est.e, est.r, est.sigma, est.rho) == (
        0.0292739,
        0.0679984,
        0.300948,
        2.91293,
        0.543256,
        0.186807,
    )
    assert est.estimator == "structural" and est.identification is None  # absent: the default estimator
    assert math.isclose(est.sigma, math.sqrt(math.log(1 + 1 / est.r)), rel_tol=1e-5)  # sigma and r agree
    assert Estimates.of({**SCALARS, "estimator": "paper"}).estimator == "paper"
    with pytest.raises(ValidationError, match="frozen"):  # a world is built from what was estimated
        est.rho = 0.5  # type: ignore[misc]


def test_a_calibration_result_hands_them_out():
    import pandas as pd

    empty = pd.DataFrame()
    result = CalibrationResult(dict(SCALARS), empty, empty, empty, empty)
    assert result.estimates == Estimates.of(SCALARS)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rho": None}, "rho"),
        ({"sigma": float("nan")}, "sigma: Value error, must be a finite number"),
        ({"u": float("inf")}, "u: Value error, must be a finite number"),
        ({"estimator": "guess"}, "estimator"),
    ],
)
def test_a_missing_or_non_finite_estimate_is_named(change, message):
    with pytest.raises(EstimatesError, match="do not give its estimates") as err:
        Estimates.of({**SCALARS, **change})
    assert message in str(err.value)
    assert "re-run `autovend calibrate`" in str(err.value)

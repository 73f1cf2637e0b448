"""`Estimates`: every scalar of a calibration, typed and checked once; calibration.json is only its stored form."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pandas as pd
import pytest
from pydantic import ValidationError

from autovend.calibration.estimates import CALIBRATION_FILE, Estimates, EstimatesError, read_estimates
from autovend.calibration.result import CalibrationResult
from autovend.canonical import json_bytes

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
    "choice_loglik": -388933.0,  # a diagnostic: a typed field too
    "e_se": None,  # not identified: stored as null
    "n_machines": 99,
    "period": ["2024-04-01", "2024-09-30"],
    "notes": ["a note"],
}


def test_the_estimates_are_the_scalars_downstream_uses():
    est = Estimates.from_stored(SCALARS)
    assert (est.u, est.x, est.e, est.r, est.sigma, est.rho) == (
        0.0292739,
        0.0679984,
        0.300948,
        2.91293,
        0.543256,
        0.186807,
    )
    assert (est.choice_loglik, est.e_se, est.n_machines) == (-388933.0, None, 99)
    assert est.period == ("2024-04-01", "2024-09-30") and est.notes == ("a note",)
    assert est.estimator == "structural" and est.identification is None  # absent: the default estimator
    assert est.u_se is None and est.units_all is None  # not recorded
    assert math.isclose(est.sigma, math.sqrt(math.log(1 + 1 / est.r)), rel_tol=1e-5)  # sigma and r agree
    assert Estimates.from_stored({**SCALARS, "estimator": "paper"}).estimator == "paper"
    with pytest.raises(ValidationError, match="frozen"):  # a world is built from what was estimated
        est.rho = 0.5  # type: ignore[misc]


def test_only_the_fields_set_are_stored_again():
    est = Estimates.from_stored(SCALARS)
    assert est.stored() == SCALARS  # no defaults added (estimator, u_se, ...), null kept as null
    assert est.stored(content_hash="abc") == {**SCALARS, "content_hash": "abc"}
    in_memory = Estimates.from_stored({**SCALARS, "choice_iterations": 40})
    assert "choice_iterations" not in in_memory.stored()  # kept in memory, never written
    assert in_memory.stored(written=False)["choice_iterations"] == 40


def test_a_calibration_result_hands_them_out():
    empty = pd.DataFrame()
    result = CalibrationResult(Estimates.from_stored(SCALARS), empty, empty, empty, empty)
    assert result.estimates == Estimates.from_stored(SCALARS)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rho": None}, "rho"),
        ({"sigma": float("nan")}, "sigma: Value error, must be a finite number"),
        ({"u": float("inf")}, "u: Value error, must be a finite number"),
        ({"r_median": float("inf")}, "r_median: Value error, is infinite"),
        ({"estimator": "guess"}, "estimator"),
        ({"guess": 1.0}, "guess: Extra inputs are not permitted"),
    ],
)
def test_a_missing_or_non_finite_estimate_is_named(change, message):
    with pytest.raises(EstimatesError, match="do not give the calibration's estimates") as err:
        Estimates.from_stored({**SCALARS, **change})
    assert message in str(err.value)
    assert "re-run `autovend calibrate`" in str(err.value)


def test_a_stored_dict_round_trips_to_the_same_bytes(tmp_path):
    """calibration.json -> Estimates -> calibration.json, byte for byte (a hand-made file: fast)."""
    stored = {**SCALARS, "params": {"em_rounds": 4}, "settings": {"eta": 0.5}, "u_at_bound": False}
    path = tmp_path / CALIBRATION_FILE
    path.write_bytes(json_bytes({**stored, "content_hash": "0" * 64}))
    est = read_estimates(path)
    assert json_bytes(est.stored(content_hash="0" * 64)) == path.read_bytes()
    assert est.params == {"em_rounds": 4} and est.u_at_bound is False


def test_calibration_json_round_trips_to_the_same_bytes(tmp_path, synthetic_calibration):
    """calibration.json -> Estimates -> the stored dict: the same bytes, content hash included."""
    synthetic_calibration.write(tmp_path / "cal")
    path = tmp_path / "cal" / CALIBRATION_FILE
    est = read_estimates(path)
    assert est == read_estimates(tmp_path / "cal")  # the file or its folder
    back = CalibrationResult.read(tmp_path / "cal")
    assert json_bytes(est.stored(content_hash=back.content_hash())) == path.read_bytes()
    assert back.content_hash() == synthetic_calibration.content_hash()
    # the typed fields hold what the calibration made (in memory: the sweep count too, not written)
    assert est.stored() == synthetic_calibration.estimates.stored()
    assert synthetic_calibration.estimates.choice_iterations is not None and est.choice_iterations is None
    assert est.n_products_kept == 1372 and est.identification is not None and est.settings is not None


def _stored(tmp_path, change: dict, drop: str | None = None) -> str:
    scalars = {**SCALARS, **change, "content_hash": "0" * 64}
    if drop:
        del scalars[drop]
    path = tmp_path / CALIBRATION_FILE
    path.write_text(json.dumps(scalars), encoding="utf-8")  # json writes NaN as a bare NaN token
    return str(path)


@pytest.mark.parametrize("field", ["u", "typical_fill", "sigma"])
def test_a_missing_field_in_calibration_json_names_the_file_and_the_field(tmp_path, field):
    path = _stored(tmp_path, {}, drop=field)
    with pytest.raises(EstimatesError) as err:
        read_estimates(path)
    assert path in str(err.value) and f"{field}: Field required" in str(err.value)


@pytest.mark.parametrize("field", ["rho", "e_se", "choice_loglik"])
def test_nan_in_calibration_json_names_the_file_and_the_field(tmp_path, field):
    path = _stored(tmp_path, {field: float("nan")})
    with pytest.raises(EstimatesError) as err:
        read_estimates(path)
    assert str(err.value).startswith(f"{path}: {field} is NaN or infinite")


def test_a_missing_or_broken_calibration_json_names_the_file(tmp_path):
    with pytest.raises(EstimatesError, match=f"cannot read {tmp_path / CALIBRATION_FILE}"):
        read_estimates(tmp_path)
    (tmp_path / CALIBRATION_FILE).write_text("{", encoding="utf-8")
    with pytest.raises(EstimatesError, match="is not JSON"):
        read_estimates(tmp_path)
    (tmp_path / CALIBRATION_FILE).write_text("[]", encoding="utf-8")
    with pytest.raises(EstimatesError, match="not a JSON object"):
        read_estimates(tmp_path)


def test_reading_a_calibration_needs_no_estimation_code():
    """`autovend summary` reads calibration.json with the base install (no [pipeline] extra): the reader and the
    identification record it holds import pydantic, not pandera, pandas, scipy or statsmodels (the wheel test
    caught `summary` asking for pandera once)."""
    code = (
        "import json, sys; import autovend.calibration.estimates; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(json.loads(out))
    assert "pydantic" in loaded and not loaded & {"pandera", "pandas", "scipy", "statsmodels"}

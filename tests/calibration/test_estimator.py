"""The estimator switch: the paper's definitions of u, e, x, r and kappa against the structural default."""

from __future__ import annotations

import json

import numpy as np
import pytest

from autovend.calibration.estimates import read_estimates
from autovend.calibration.estimator import paper_estimates
from autovend.errors import InsufficientDataError
from tests.conftest import PARAMS, SETTINGS


def test_paper_numbers_give_the_papers_full_to_typical_ratio():
    """§3.3: with x = 0.0638 and e = 0.318, u = x e / (1 - e) = 0.02975, and a full reference shelf sells
    about 1.42 times a typical real shelf: (1 / (1 + u)) / (x / (u + x)) = 0.028891 / 0.020288 = 1.424."""
    pe = paper_estimates(0.0638, 0.318, 0.01, 2.74, np.array([20.0, 10.0]), np.array([100.0, 50.0]))
    assert pe.u == pytest.approx(0.0638 * 0.318 / 0.682, rel=1e-12)
    assert pe.u == pytest.approx(0.029748, abs=1e-6)
    full = pe.u / (1 + pe.u)  # units per unit of kappa R on the full shelf (W = R)
    typical = pe.u * pe.x / (pe.u + pe.x)  # ... on the typical shelf (W = x R)
    assert full / typical == pytest.approx(1.424, abs=1e-3)
    # kappa = units / (x e R): machine 0 and 1 differ in units and R by the same factor 2
    assert pe.kappa == pytest.approx([20 / (0.0638 * 0.318 * 100)] * 2, rel=1e-12)
    assert pe.sigma == pytest.approx(np.sqrt(np.log(1 + 1 / 2.74)), rel=1e-12)


@pytest.mark.parametrize("e", [0.0, 1.0, -0.2, float("nan")])
def test_paper_estimator_refuses_an_elasticity_outside_0_1(e):
    with pytest.raises(InsufficientDataError, match="strictly between 0 and 1.*--estimator structural"):
        paper_estimates(0.06, e, 0.01, 3.0, np.array([10.0]), np.array([100.0]))


def test_paper_estimator_refuses_a_machine_without_units():
    with pytest.raises(InsufficientDataError, match=r"position\(s\) \[1\]"):
        paper_estimates(0.06, 0.3, 0.01, 3.0, np.array([10.0, 0.0]), np.array([100.0, 80.0]))


@pytest.fixture(scope="module")
def paper_calibration(synthetic_source):
    from autovend.calibration.calibrate import calibrate
    from autovend.calibration.config import load_calibration_config
    from autovend.demand.settings import load_demand_settings

    return calibrate(synthetic_source, load_calibration_config(PARAMS), load_demand_settings(SETTINGS), "paper")


def test_paper_estimator_takes_the_loglog_slope_and_the_median_r(paper_calibration, synthetic_calibration):
    s, d = paper_calibration.estimates, synthetic_calibration.estimates
    assert s.e == s.e_loglog
    assert s.r == s.r_median
    assert s.u == pytest.approx(s.x * s.e / (1 - s.e), rel=1e-5)  # scalars rounded to 6 digits
    assert s.sigma == pytest.approx(np.sqrt(np.log1p(1 / s.r)), rel=1e-5)
    # the statistics both estimators report are the same fit's
    for key in ("e_loglog", "r_median", "x_all_machines", "rho"):
        assert getattr(s, key) == getattr(d, key), key
    assert s.x == d.x_all_machines
    assert d.e != d.e_loglog and d.r != d.r_median  # the default does not take them


def test_paper_kappa_makes_a_typical_shelf_sell_the_observed_mean_units(paper_calibration):
    """Typical real shelf W = x R_m: expected units U W / (U + W) equal each machine's mean daily units."""
    s, m = paper_calibration.estimates, paper_calibration.machines
    W = s.x * m["R"].to_numpy()
    U = m["U"].to_numpy()
    np.testing.assert_allclose(U * W / (U + W), m["mean_daily_units"].to_numpy(), rtol=1e-5)
    np.testing.assert_allclose(U, s.u * m["R"].to_numpy(), rtol=1e-5)
    assert set(m["kappa_source"]) == {"observed_mean_units"}


def test_calibration_json_records_the_estimator_only_when_not_the_default(
    paper_calibration, synthetic_calibration, tmp_path
):
    paper_calibration.write(tmp_path / "paper")
    synthetic_calibration.write(tmp_path / "structural")
    paper = json.loads((tmp_path / "paper" / "calibration.json").read_text())
    default = json.loads((tmp_path / "structural" / "calibration.json").read_text())
    assert paper["estimator"] == "paper" and read_estimates(tmp_path / "paper").estimator == "paper"
    assert "estimator" not in default and read_estimates(tmp_path / "structural").estimator == "structural"
    assert paper["content_hash"] != default["content_hash"]


def test_unknown_estimator_is_refused(synthetic_source):
    from autovend.calibration.calibrate import calibrate

    with pytest.raises(ValueError, match="unknown estimator 'pooled'; choose one of: structural, paper"):
        calibrate(synthetic_source, estimator="pooled")  # type: ignore[arg-type]

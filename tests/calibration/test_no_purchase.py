"""The log-log elasticity with machine and weekday effects, against the dummy-variable regression."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from autovend.calibration.no_purchase import loglog_elasticity


def _panel(seed: int, n_machines: int, days: int):
    rng = np.random.default_rng(seed)
    m = np.repeat(np.arange(n_machines) * 3 + 2, days)  # machine codes need not be 0..G-1
    weekday = np.tile(np.arange(days) % 7, n_machines)
    W = np.exp(rng.normal(0.0, 0.4, len(m)) + 0.05 * m)
    units = rng.poisson(np.exp(0.35 * np.log(W) + 1.0 + 0.1 * weekday + 0.02 * m))
    return units, W, m, weekday


@pytest.mark.parametrize("n_machines", [1, 2, 9])
def test_loglog_slope_and_clustered_se_equal_the_dummy_variable_regression(n_machines):
    units, W, m, weekday = _panel(4, n_machines, 180)
    slope, se = loglog_elasticity(units, W, m, weekday)
    df = pd.DataFrame({"y": units, "w": W, "m": m, "wd": weekday})
    df = df[df["y"] > 0]
    df = df.assign(ly=np.log(df["y"]), lw=np.log(df["w"]))
    model = smf.ols("ly ~ lw + C(m) + C(wd)", data=df)
    if n_machines > 1:
        fit = model.fit(cov_type="cluster", cov_kwds={"groups": df["m"].to_numpy()})
    else:
        fit = model.fit(cov_type="HC1")
    assert slope == pytest.approx(fit.params["lw"], rel=1e-10)
    assert se == pytest.approx(fit.bse["lw"], rel=1e-10)
    assert 0.2 < slope < 0.5  # the simulated slope is 0.35


def test_loglog_needs_ten_days_with_sales():
    units, W, m, weekday = _panel(1, 1, 9)
    assert np.isnan(loglog_elasticity(units, W, m, weekday)).all()

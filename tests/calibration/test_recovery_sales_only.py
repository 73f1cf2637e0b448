"""Recovery from sales alone (PyBLP style: known truth, fixed seeds, stated tolerances), on operators of two shapes.

Two synthetic operators without inventory records, 30 machines each, the embedded operator's kept subcategories:
few products per machine (10-20) over a long history (300 days), and many (50-80) over a short one (90 days). The
sales rule's raw popularity (a product on the shelf only on the days it sold, or between sales 14 days apart) is
the comparison the latent availability must beat. Measured when these tests were written: few-long slope 0.98,
Spearman 0.89 (sales rule 0.68, 0.71); many-short 0.68, 0.70 (sales rule 0.47, 0.71: the ranks no better; with
inventory records 0.92, 0.96: a short history of many slow products is where sales alone say least); rho 0.23
and 0.27 (truth 0.21); u not identified on both, the truth inside the range the data cannot reject.

Popularity is compared over the products with at least 20 units (what the records measure), within subcategory:
the slope of log estimate on log truth and the median Spearman over subcategories.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from autovend.calibration.calibrate import calibrate
from autovend.calibration.choice import choice_data
from autovend.calibration.config import load_calibration_config
from autovend.calibration.panel import build_panel
from autovend.calibration.split import fit_choice
from autovend.data.load import load_source
from autovend.data.synth.config import OperatorSettings, SynthConfig
from autovend.data.synth.generate import synthesize, write_source
from autovend.demand.settings import DemandSettings

pytestmark = pytest.mark.slow  # two synthetic operators, each calibrated twice (about 20 s)

ROOT = Path(__file__).resolve().parents[2]
LOCATIONS = {"worksite/canteen": 8, "residential/apartment": 8, "commercial/hotel": 8, "office/office_building": 6}
SHAPES = {
    "few-long": (5, dt.date(2024, 1, 1), 300, 10, 20),
    "many-short": (6, dt.date(2024, 3, 1), 90, 50, 80),
}
# (slope, Spearman) each shape must reach, and its margin over the sales rule on the slope
FLOORS = {"few-long": (0.85, 0.80, 0.10), "many-short": (0.60, 0.60, 0.15)}


def _popularity_fit(omega: pd.Series, units: pd.Series, truth: pd.DataFrame, g2: pd.Series) -> tuple[float, float]:
    big = units.index[units >= 20]
    d = pd.DataFrame({"est": np.log(omega[big]), "tru": np.log(truth.loc[big, "omega"]), "g": g2[big]})
    d = d[np.isfinite(d["est"])]
    dm = d.groupby("g")[["est", "tru"]].transform(lambda x: x - x.mean())
    slope = float(np.polyfit(dm["tru"], dm["est"], 1)[0])
    spearman = float(np.median([stats.spearmanr(g["est"], g["tru"])[0] for _, g in d.groupby("g") if len(g) >= 5]))
    return slope, spearman


@pytest.fixture(scope="module", params=list(SHAPES))
def operator(request, tmp_path_factory):
    seed, start, days, lo, hi = SHAPES[request.param]
    folder = tmp_path_factory.mktemp(request.param)
    cfg = SynthConfig(
        seed=seed,
        start=start,
        end=start + dt.timedelta(days=days - 1),
        locations=LOCATIONS,
        n_with_inventory=0,
        target_units=60_000,
        operator=OperatorSettings(assortment_min=lo, assortment_max=hi),
    )
    write_source(synthesize(cfg), folder / "src", folder / "truth")
    source = load_source(folder / "src")
    config = load_calibration_config(ROOT / "params" / "synthetic-cn.yaml")
    res = calibrate(source, config)
    panel = build_panel(dataclasses.replace(source, inventory=None), config)
    rule = fit_choice(choice_data(panel, DemandSettings()), em_rounds=0)
    truth = {
        "scalars": json.loads((folder / "truth" / "truth.json").read_text()),
        "products": pd.read_parquet(folder / "truth" / "products.parquet").set_index("sku_id"),
    }
    sku = panel.products["sku_id"].to_numpy()
    rule_pop = pd.DataFrame({"omega": rule.omega, "units": rule.units}, index=sku)
    return request.param, res, rule_pop, truth


def test_popularity_is_recovered_and_beats_the_sales_rule(operator):
    shape, res, rule, truth = operator
    pop = res.popularity.set_index("sku_id")
    slope, spearman = _popularity_fit(pop["omega"], pop["units"], truth["products"], pop["category_l2"])
    rule_slope, _ = _popularity_fit(rule["omega"], pop["units"], truth["products"], pop["category_l2"])
    floor_slope, floor_spearman, margin = FLOORS[shape]
    assert slope >= floor_slope and spearman >= floor_spearman, (shape, slope, spearman)
    assert slope >= rule_slope + margin, (shape, slope, rule_slope)


def test_u_is_recovered_or_left_to_the_prior_with_the_truth_in_its_range(operator):
    shape, res, _, truth = operator
    est, u_true = res.estimates, truth["scalars"]["u"]
    assert est.u_interval is not None and est.u_identified is not None
    low, high = est.u_interval
    if est.u_identified:
        assert abs(np.log(est.u / u_true)) <= np.log(1.5), (shape, est.u, u_true)
    else:
        assert est.u_source == "fallback"
    assert (low is None or low <= u_true) and (high is None or u_true <= high), (shape, est.u_interval, u_true)
    assert low is not None and high is not None  # the profile closes on both sides: a range, not the bounds


def test_rho_is_recovered(operator):
    shape, res, _, truth = operator
    assert abs(res.estimates.rho - truth["scalars"]["rho"]) <= 0.1, (shape, res.estimates.rho)

"""The validation protocol can fail: an operator generated from another model than the one calibrated scores worse.

Two synthetic operators differ only in `truth.popularity_drift`: 0 (eq. 4's fixed popularity, the model the
calibration fits) and 0.5 (each product's popularity drifts by exp(g_k d / 30), g_k ~ N(0, 0.5), so a product's
appeal moves by a factor of about 1.6 a month in either direction). Both are validated the same way on their last
8 weeks (seed 5, 11 machines of which 8 have inventory records, 24 weeks). With 20 replay seeds the well-specified
operator gave volume error +5.4%, WAPE 0.227, TVD 0.039, Spearman 0.887, and the drifting one +15.9%, 0.263,
0.104, 0.782, its WAPE no better than the persistence reference's (0.242). The test replays 10 seeds and asserts
margins well inside those gaps.
"""

from __future__ import annotations

import datetime as dt

import pytest

from autovend.data.load import load_source
from autovend.data.synth.config import SynthConfig, TruthSettings
from autovend.data.synth.generate import synthesize, write_source
from autovend.validation.config import ValidationConfig
from autovend.validation.validate import validate

LOCATIONS = {"worksite/canteen": 3, "residential/apartment": 3, "commercial/hotel": 3, "office/office_building": 2}


def _validated(folder, drift: float):
    cfg = SynthConfig(
        seed=5,
        start=dt.date(2024, 6, 3),
        end=dt.date(2024, 6, 3) + dt.timedelta(days=167),
        locations=LOCATIONS,
        n_with_inventory=8,
        target_units=30_000,
        truth=TruthSettings(popularity_drift=drift),
    )
    write_source(synthesize(cfg), folder / "src", folder / "truth")
    return validate(load_source(folder / "src"), config=ValidationConfig(seeds=10), estimators=("structural",))


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """(well-specified, drifting) validation metrics."""
    return (
        _validated(tmp_path_factory.mktemp("fixed"), 0.0).metrics,
        _validated(tmp_path_factory.mktemp("drift"), 0.5).metrics,
    )


@pytest.mark.slow
def test_drifting_popularity_scores_clearly_worse_on_every_figure(pair):
    fixed, drift = pair
    assert fixed["n_machines"] == drift["n_machines"] == 8
    assert abs(drift["volume_error"]) > abs(fixed["volume_error"]) + 0.05
    assert drift["wape"] > fixed["wape"] + 0.02
    assert drift["tvd"] > 2 * fixed["tvd"]
    assert drift["spearman_median"] < fixed["spearman_median"] - 0.05


@pytest.mark.slow
def test_only_the_well_specified_operator_beats_every_reference(pair):
    fixed, drift = pair
    assert fixed["beats_all_references"] is True
    assert drift["references"]["wape_vs_persistence"]["model_beats_reference"] is False


def test_no_drift_draws_nothing_from_the_drift_stream():
    """popularity_drift 0 leaves the operator's other draws alone: the default source does not change."""
    from autovend.data.synth.operator import popularity_drift

    assert popularity_drift(5, 10, 0.0) is None
    g = popularity_drift(5, 10_000, 0.5)
    assert g.std() == pytest.approx(0.5, rel=0.03) and abs(g.mean()) < 0.02

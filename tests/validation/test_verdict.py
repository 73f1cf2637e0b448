"""The verdict is made of the four key comparisons, and a report that cannot reject reversed popularity says so."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.validation.bootstrap import Comparison
from autovend.validation.verdict import KEY_COMPARISONS, decide, headline, rejected, verdict_payload


def _comps(*outcomes):
    return [
        Comparison(against, metric, 0.2, 0.3, -0.1, -0.2 if o else 0.05, -0.01 if o else 0.2, o)
        for (against, metric), o in zip(KEY_COMPARISONS, outcomes, strict=True)
    ]


@pytest.mark.parametrize(
    ("outcomes", "verdict"),
    [
        ((True, True, True, True), "validated"),
        ((True, None, True, True), "not_distinguishable"),
        ((True, True, True, None), "not_distinguishable"),
        ((True, True, None, True), "not_distinguishable"),  # a model that cannot beat the pairs' own recent sales
        ((None, None, None, None), "not_distinguishable"),
        ((False, True, True, True), "worse_than_reference"),
        ((True, True, True, False), "worse_than_reference"),
        ((True, True, False, True), "worse_than_reference"),
    ],
)
def test_the_verdict_needs_all_four_key_comparisons(outcomes, verdict):
    assert decide(_comps(*outcomes)) == verdict


def test_a_better_score_on_another_metric_does_not_validate():
    comps = _comps(True, True, True, None) + [
        Comparison("reversed_popularity", "tvd", 0.1, 0.2, -0.1, -0.2, -0.05, True)
    ]
    assert decide(comps) == "not_distinguishable"
    assert rejected(comps)["reversed_popularity"] == ["tvd"]


def test_the_first_lines_say_what_cannot_be_rejected():
    payload = verdict_payload(_comps(True, True, True, None), "pre_window", 25, 2000)
    assert payload["verdict"] == "not_distinguishable" and payload["shelves"] == "pre_window"
    assert set(payload["comparisons"][0]) == {
        "against",
        "metric",
        "model",
        "other",
        "difference",
        "ci_low",
        "ci_high",
        "better",
        "p_value",
        "p_min",
    }
    lines = headline(payload)
    assert lines[0].startswith("**Not distinguishable**: wape against persistence -0.100 [-0.200, -0.010] (better)")
    assert lines[1].startswith("**This validation cannot reject reversed popularity**")
    assert "`shuffled_popularity`" in lines[2]  # no comparison with it at all: not rejected
    ok = headline(verdict_payload(_comps(True, True, True, True), "inventory", 67, 2000))
    assert ok[0].startswith("**Validated**") and not any("cannot reject reversed" in line for line in ok)


def test_the_sign_flip_test_counts_every_sign_vector_below_17_machines():
    """Five machines all on the model's side: only the observed signs do as well, p = 1/32 (the smallest 5 allow)."""
    from autovend.validation.bootstrap import sign_flip_p

    assert sign_flip_p(np.array([-1.0, -2.0, -3.0, -0.5, -4.0]), lower=True, seed=0) == 1 / 32
    # one machine the other way: the sums at or below -9.0 are the observed signs and the one with +0.5 flipped
    assert sign_flip_p(np.array([-1.0, -2.0, -3.0, 0.5, -4.0]), lower=True, seed=0) == 2 / 32
    assert sign_flip_p(np.array([-1.0, -2.0, -3.0, -0.5, -4.0]), lower=False, seed=0) == 1.0
    # four machines: the smallest p is 1/16 > 0.05, so four machines can never decide
    assert sign_flip_p(np.array([-1.0, -1.0, -1.0, -1.0]), lower=True, seed=0) == 1 / 16
    # 20 machines: 10,000 random sign vectors plus the observed one
    p = sign_flip_p(-np.ones(20), lower=True, seed=3)
    assert p == 1 / 10_001


def test_with_few_machines_an_interval_alone_does_not_take_a_side():
    """A bootstrap interval excluding zero over five machines is not enough where the exact test says p = 0.0625."""
    from autovend.validation.bootstrap import Scorer
    from autovend.validation.grid import EvalGrid, Forecast

    M = 5
    grid = EvalGrid(
        machines=np.arange(M),
        n_days=7,
        n_products=1,
        g2=np.zeros(1, np.int64),
        n_g2=1,
        pair_key=np.arange(M),
        ranked=np.ones(M, bool),
        real_mw=np.full((M, 1), 10.0),
        real_pair=np.full(M, 10.0),
    )
    scorer = Scorer(grid, 500, 0)
    good = np.array([9.0, 9.0, 9.0, 9.0, 12.0])  # errors 1, 1, 1, 1, 2
    bad = np.array([7.0, 7.0, 7.0, 7.0, 11.0])  # errors 3, 3, 3, 3, 1: the model ahead on four machines of five
    scorer.add(Forecast("model", good[:, None], good))
    scorer.add(Forecast("other", bad[:, None], bad))
    c = scorer.compare("model", "other", "wape")
    assert c.difference == pytest.approx((6 - 13) / 50)
    assert c.p_value == 2 / 32 and c.p_min == 1 / 32  # the observed signs and the one with machine 5 flipped
    assert c.ci_high < 0 and c.better is None

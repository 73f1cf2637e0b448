"""The verdict is made of the three key comparisons, and a report that cannot reject reversed popularity says so."""

from __future__ import annotations

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
        ((True, True, True), "validated"),
        ((True, None, True), "not_distinguishable"),
        ((True, True, None), "not_distinguishable"),
        ((None, None, None), "not_distinguishable"),
        ((False, True, True), "worse_than_reference"),
        ((True, True, False), "worse_than_reference"),
    ],
)
def test_the_verdict_needs_all_three_key_comparisons(outcomes, verdict):
    assert decide(_comps(*outcomes)) == verdict


def test_a_better_score_on_another_metric_does_not_validate():
    comps = _comps(True, True, None) + [Comparison("reversed_popularity", "tvd", 0.1, 0.2, -0.1, -0.2, -0.05, True)]
    assert decide(comps) == "not_distinguishable"
    assert rejected(comps)["reversed_popularity"] == ["tvd"]


def test_the_first_lines_say_what_cannot_be_rejected():
    payload = verdict_payload(_comps(True, True, None), "pre_window", 5, 2000)
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
    }
    lines = headline(payload)
    assert lines[0].startswith("**Not distinguishable**: wape against persistence -0.100 [-0.200, -0.010] (better)")
    assert lines[1].startswith("**This validation cannot reject reversed popularity**")
    assert "`shuffled_popularity`" in lines[2]  # no comparison with it at all: not rejected
    ok = headline(verdict_payload(_comps(True, True, True), "inventory", 67, 2000))
    assert ok[0].startswith("**Validated**") and not any("cannot reject reversed" in line for line in ok)

"""metrics.json holds null, never NaN or an infinity, where a metric was not computed."""

from __future__ import annotations

import math

import pytest

from autovend.errors import NonFiniteError
from autovend.validation.report import json_ready


def test_not_computed_metrics_become_null_at_any_depth():
    value = {"wape": 0.5, "spearman_median": math.nan, "ablation": {"tvd": math.nan, "n": 3}, "seeds": [1.0, math.nan]}
    assert json_ready(value) == {
        "wape": 0.5,
        "spearman_median": None,
        "ablation": {"tvd": None, "n": 3},
        "seeds": [1.0, None],
    }


def test_an_infinite_metric_is_refused_with_its_path():
    with pytest.raises(NonFiniteError, match=r"metrics\.ablation\.wape is infinite"):
        json_ready({"ablation": {"wape": math.inf}})

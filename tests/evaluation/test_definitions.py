"""The shared labels, formats and definitions of the headline metrics and failure modes."""

from __future__ import annotations

import math

from autovend.evaluation.definitions import DEFINITIONS, FAILURE_DEFINITIONS, FAILURE_LABELS, HEADLINE, format_metric


def test_format_metric_applies_the_headline_scale_and_format():
    assert format_metric("net_assets", 274_304.79) == "274.30"  # thousand CNY, two decimals
    assert format_metric("waste_rate", 0.124) == "12.40"  # a share shown in %
    assert format_metric("capital_efficiency", 0.012345) == "0.0123"
    assert format_metric("tool_calls", 1234) == "1234"


def test_format_metric_shows_a_dash_for_missing_or_non_finite_values():
    assert format_metric("net_assets", None) == "–"
    assert format_metric("net_assets", math.nan) == "–"
    assert format_metric("pricing_regret", math.inf) == "–"


def test_every_headline_metric_and_failure_mode_has_a_definition():
    assert set(DEFINITIONS) == set(HEADLINE)
    assert set(FAILURE_DEFINITIONS) == set(FAILURE_LABELS)

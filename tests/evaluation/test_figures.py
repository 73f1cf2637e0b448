"""Figures of runs: deterministic files (same numbers, same bytes, no stamp), titles that say what is drawn."""

from __future__ import annotations

import pandas as pd
import pytest

from autovend.evaluation.figures import early_late_figure, net_assets_title, profile_figure, visit_share
from autovend.png import png_chunks

STAMPS = {b"tEXt", b"zTXt", b"iTXt", b"tIME"}


def _feedback(early: float, late: float) -> dict:
    period = {"gross_profit": 40.0, "costs": 25.0, "visits": 2.0}
    return {
        "details": {"feedback": {"early": {"asset_growth": early, **period}, "late": {"asset_growth": late, **period}}}
    }


def test_profile_and_early_late_figures_are_the_same_bytes_twice(tmp_path):
    summary = pd.DataFrame(
        {
            "net_assets": [51_000.0, 48_500.0],
            "assortment": [0.8, 0.6],
            "waste_rate": [0.02, 0.05],
            "pricing_regret": [0.1, 0.3],
            "capital_efficiency": [1.2, 0.9],
        },
        index=["rule", "llm"],
    )
    metrics = [_feedback(10.0, 14.0), _feedback(-3.0, 6.0)]
    for name in ("a", "b"):
        profile_figure(summary, tmp_path / f"profile_{name}.png")
        early_late_figure(metrics, ["rule", "llm"], tmp_path / f"early_late_{name}.png", currency="CNY")
    for figure in ("profile", "early_late"):
        first = (tmp_path / f"{figure}_a.png").read_bytes()
        assert first == (tmp_path / f"{figure}_b.png").read_bytes(), figure
        assert not STAMPS & {kind for kind, _ in png_chunks(first)}, figure


def test_net_assets_title_says_what_a_line_is():
    assert net_assets_title([1]) == "Net assets (one run)"
    assert net_assets_title([1, 1, 1]) == "Net assets (3 runs, one line each)"
    assert net_assets_title([3, 1]) == "Net assets (mean over each group's runs, min-max band)"


def test_profile_radar_needs_two_agents(tmp_path):
    one = pd.DataFrame({"net_assets": [51_000.0], "assortment": [0.8]}, index=["rule"])
    with pytest.raises(ValueError, match="at least 2 rows, got 1"):
        profile_figure(one, tmp_path / "profile.png")
    assert not (tmp_path / "profile.png").exists()


def test_visit_share_is_a_trailing_seven_day_mean():
    # 20 machines, all visited on days 1 and 8, none in between: the daily share jumps 1, 0, ..., 0, 1
    daily = pd.DataFrame({"day": range(1, 10), "visits": [20, 0, 0, 0, 0, 0, 0, 20, 0]})
    share = visit_share(daily, 20).tolist()
    # days 1-7: one visit day among the first d days -> 1/d; day 8: days 2-8 hold one -> 1/7; day 9: days 3-9 -> 1/7
    assert share == pytest.approx([1.0, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 6, 1 / 7, 1 / 7, 1 / 7])

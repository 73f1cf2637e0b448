"""The replay chart's axes: round ticks spanning the data on y, round days on x, labels a person can read."""

from __future__ import annotations

import re

import pytest

from autovend.console.chart import Series, day_ticks, line_chart, nice_ticks, tick_label


@pytest.mark.parametrize(
    "lo,hi",
    [(15_619.38, 274_304.79), (39_386.4, 40_887.07), (-1_234.5, 880.0), (0.0, 0.37), (5.0, 5.0), (-3e6, 1e7)],
)
def test_ticks_are_round_evenly_spaced_and_span_the_data(lo, hi):
    ticks = nice_ticks(lo, hi, 6)
    if lo == hi:  # a flat line is drawn in the middle of ±1 around it
        lo, hi = lo - 1, hi + 1
    assert 4 <= len(ticks) <= 8 and ticks[0] <= lo and ticks[-1] >= hi
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:], strict=False)}
    assert len(steps) == 1
    step = steps.pop()
    mantissa = step / 10 ** int(f"{step:e}".split("e")[1])
    assert round(mantissa, 9) in (1.0, 2.0, 5.0)
    assert ticks[0] > lo - step and ticks[-1] < hi + step  # no empty band below or above the data


def test_labels():
    assert [tick_label(v, 50_000.0) for v in (0.0, 50_000.0, 300_000.0)] == ["0", "50k", "300k"]
    assert tick_label(2_500.0, 2_500.0) == "2.5k" and tick_label(39_500.0, 500.0) == "39,500"
    assert tick_label(0.25, 0.05) == "0.25"


def test_day_ticks():
    assert day_ticks(180) == [1, 50, 100, 150, 180]
    assert day_ticks(10) == [1, 2, 4, 6, 8, 10]
    assert day_ticks(1) == [1]


def test_the_chart_labels_every_tick():
    values = [40_000.0 + 1_500.0 * i for i in range(90)]
    svg = line_chart([Series("net assets", values, "#1f77b4")], marker_day=30)
    ys = [float(v) for v in re.findall(r'class="ytick" data-value="([^"]+)"', svg)]
    assert ys == nice_ticks(min(values), max(values), 6) and len(ys) >= 4
    assert re.findall(r'class="xtick" data-day="(\d+)"', svg) == ["1", "20", "40", "60", "80", "90"]
    marker = re.search(r'<line class="marker" x1="([\d.]+)"[^>]*data-x0="(\d+)" data-dx="([\d.]+)"', svg)
    assert float(marker.group(1)) == pytest.approx(float(marker.group(2)) + 29 * float(marker.group(3)), abs=0.1)

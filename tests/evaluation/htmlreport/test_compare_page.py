"""report.html of a comparison: mean ± std per agent by hand, links to the runs' pages, charts drawn offline."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from autovend.evaluation.htmlreport import charts as ch
from autovend.evaluation.htmlreport.compare_page import agent_stats, unique_labels
from autovend.evaluation.report import write_comparison
from autovend.evaluation.rundata import RunData

from ...browser import canvas_pixels, offline_page, wait_until_painted

SERIES = [tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in ch.PALETTE[:5]]


def test_agent_stats_by_hand():
    table = pd.DataFrame(
        {"agent": ["x", "y", "x"], "net_assets": [41000.0, 39000.0, 43000.0], "waste_rate": [0.1, 0.2, None]}
    )
    s = agent_stats(table)
    assert s.loc["x", "runs"] == 2 and s.loc["x", "net_assets"] == 42000.0
    assert s.loc["x", "net_assets_std"] == pytest.approx(math.sqrt(2) * 1000.0)  # (41000, 43000): sample std 1414.2
    assert s.loc["x", "waste_rate"] == 0.1 and math.isnan(s.loc["x", "waste_rate_std"])  # one value: no spread
    assert s.loc["y", "runs"] == 1 and math.isnan(s.loc["y", "net_assets_std"])
    assert list(s.index) == ["x", "y"]  # first-seen order


@pytest.mark.slow
def test_a_run_compared_twice_gets_its_own_label(toy_run_dirs, tmp_path):
    assert unique_labels(["a", "b", "a", "a"]) == ["a", "b", "a (2)", "a (3)"]
    run = RunData.load(toy_run_dirs[0])
    write_comparison([run, run], tmp_path / "cmp", force=True)  # a category axis shows each name once
    page = (tmp_path / "cmp" / "report.html").read_text()
    assert "baseline-s1 (2)" in page and "the same agent and seed twice" in page


@pytest.fixture(scope="module")
def compared(toy_run_dirs, tmp_path_factory):
    out = tmp_path_factory.mktemp("cmp") / "compare"
    runs = [RunData.load(d) for d in toy_run_dirs]
    table, _ = write_comparison(runs, out)
    return out, table


def test_comparison_page_shows_mean_and_std_and_links_the_runs(compared):
    out, table = compared
    page = (out / "report.html").read_text()
    mean, std = table["net_assets"].mean(), table["net_assets"].std(ddof=1)
    assert f'<td class="num">{mean / 1000:.2f} ± {std / 1000:.2f}</td>' in page  # thousand CNY
    links = re.findall(r'<a href="([^"#]+)">(baseline-s\d)</a>', page)
    assert {name for _, name in links} == {"baseline-s1", "baseline-s2"}
    for href, name in links:  # relative to the comparison's folder, so the pages open from disk as they lie
        assert href.startswith("../") and href.endswith(f"/{name}/report.html") and (out / href).exists(), href


@pytest.mark.slow
def test_comparison_charts_are_drawn_offline(compared, tmp_path):
    out, _ = compared
    # two lines over 10 days; two dots of 12 px (about 110 px each)
    least = {"chart-net-assets": 300, "chart-final-assets": 150}
    with offline_page(out / "report.html", tmp_path / "profile") as visit:
        for chart, n in least.items():
            wait_until_painted(visit.page, [chart], SERIES, n)
            assert canvas_pixels(visit.page, chart, SERIES)["matching"] >= n, chart
        assert visit.blocked == [] and visit.errors == []


def test_the_comparison_page_is_byte_stable(compared, toy_run_dirs, tmp_path):
    out, _ = compared
    again = tmp_path / "again"
    write_comparison([RunData.load(d) for d in toy_run_dirs], again)
    first = (out / "report.html").read_text()
    second = (again / "report.html").read_text()
    # the same but for the links, which are relative to each output folder
    strip = re.compile(r'href="[^"#][^"]*"')
    assert strip.sub("", first) == strip.sub("", second) and Path(out).name != again.name

"""report.html of a run: written with the run, byte-stable, offline, and drawn in a real (headless) browser."""

from __future__ import annotations

import dataclasses
import html
import json
import re

import pytest

from autovend.evaluation.definitions import DEFINITIONS, FAILURE_LABELS, HEADLINE, format_metric
from autovend.evaluation.htmlreport import charts as ch
from autovend.evaluation.htmlreport.run_page import run_html, write_run_html
from autovend.evaluation.htmlreport.scorecard import NormalisedScore
from autovend.evaluation.htmlreport.tables import day_table, findings
from autovend.evaluation.metrics import compute_metrics
from autovend.evaluation.rundata import RunData

from ...browser import canvas_pixels, offline_page, wait_until_painted
from .conftest import DAYS

RUN_CHARTS = (
    "chart-net-assets",
    "chart-cash-inventory",
    "chart-stock",
    "chart-revenue-machine",
    "chart-revenue-site",
    "chart-stockouts",
    "chart-prices",
)
# the series colours (the palette's first five); axes, labels and grid are black or grey
SERIES = [tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in ch.PALETTE[:5]]
DATA_PIXELS = 300  # a line of 10 days across the chart paints over a thousand; an empty chart none


@pytest.fixture(scope="module")
def run(toy_run_dirs):
    return RunData.load(toy_run_dirs[0])


@pytest.fixture(scope="module")
def metrics(run):
    return json.loads((run.run_dir / "metrics.json").read_text())


def test_the_run_folder_holds_report_html_and_it_is_byte_stable(run, metrics, tmp_path):
    written = (run.run_dir / "report.html").read_bytes()
    for _ in range(2):
        ch.line_chart("other", "CNY", [ch.Line("x", [1], [1.0], ch.color(1))])  # moves Bokeh's id counter
        again = write_run_html(run, metrics, tmp_path / "report.html").read_bytes()
        assert again == written


def test_wall_time_does_not_change_the_page(run, metrics):
    slower = dataclasses.replace(run, meta={**run.meta, "wall_time_s": 1234.5})
    assert run_html(slower, metrics) == (run.run_dir / "report.html").read_text()


def test_page_is_self_contained(run):
    page = (run.run_dir / "report.html").read_text()
    markup = re.sub(r"<script\b.*?</script>", "", page, flags=re.S)  # BokehJS's code holds URLs in strings
    assert not re.search(r'(src|href)="(https?:)?//', markup)  # no script, style or link to fetch
    assert "<script src" not in page and "<link" not in page
    assert page.count("BEGIN bokeh.min.js") == 1
    charts = re.findall(r'<script type="application/json" data-chart="([^"]+)">(.*?)</script>', page, re.S)
    assert tuple(c for c, _ in charts) == RUN_CHARTS
    for _, item in charts:
        text = json.loads(item.replace("\\u003c", "<"))
        assert "nan" not in json.dumps(text).lower()


def test_metrics_and_definitions_are_shown(run, metrics):
    page = (run.run_dir / "report.html").read_text()
    for key, (label, _, _, _) in HEADLINE.items():
        assert f"<td>{html.escape(label)}</td>" in page, key
        assert html.escape(DEFINITIONS[key]) in page, key
    tools = f'<td>Tool calls</td><td class="num">{metrics["tool_calls"]}</td>'
    assert tools in page


def test_day_table_has_one_anchored_row_per_day(run):
    page = (run.run_dir / "report.html").read_text()
    assert re.findall(r'<tr id="day-(\d+)"', page) == [str(d) for d in range(1, DAYS + 1)]
    for target in set(re.findall(r'href="#([^"]+)"', page)):  # every in-page link lands somewhere
        assert f'id="{target}"' in page, target


def test_findings_link_to_their_days(hand_run):
    metrics = compute_metrics(hand_run)
    page = run_html(hand_run, metrics)
    # the hand run's one finding: M1 visited on day 3 after 7.00 CNY of gross profit since day 1
    assert '<li><a href="#day-3">day 3</a>: device_id=M1, previous_visit=1' in page
    row = re.search(r'<tr id="day-3"[^>]*>', page).group(0)
    assert 'data-find="fragmented_visits"' in row
    assert f'<a href="#finding-fragmented_visits">{FAILURE_LABELS["fragmented_visits"]}</a>' in page


def test_the_normalised_score_has_a_marked_slot(run, metrics):
    page = (run.run_dir / "report.html").read_text()
    slot = re.search(r'<div class="card slot" id="normalised-score" data-slot="normalised-score">(.*?)</div>', page)
    assert '<span class="value">–</span>' in slot.group(1)
    filled = run_html(run, metrics, normalised=NormalisedScore(0.4321, 30_000.0, 90_000.0))
    slot = re.search(r'id="normalised-score" data-slot="normalised-score">(.*?)</div>', filled).group(1)
    assert '<span class="value">0.432</span>' in slot and "hold 30,000.00 CNY, oracle 90,000.00 CNY" in slot


# ---------------------------------------------------------------------------------------------- in the browser


@pytest.mark.slow
def test_the_page_opens_on_its_scorecard(run, metrics, tmp_path):
    """At 1280 x 900 the first screen holds the final net assets, the 14 metrics and the slot of the score."""
    with offline_page(run.run_dir / "report.html", tmp_path / "profile", 1280, 900) as visit:
        page = visit.page
        card = page.locator("#scorecard")
        box = card.bounding_box()
        assert box is not None and box["y"] + box["height"] <= 900
        assert page.inner_text("#final-net-assets .value") == f"{run.final_net_assets:,.2f}"
        assert page.inner_text("#final-net-assets .sub") == (
            f"start cash {run.start_cash:,.2f}, growth {run.final_net_assets - run.start_cash:+,.2f}"
        )
        tiles = card.locator(".tiles .card")
        assert tiles.evaluate_all("ts => ts.map(t => t.dataset.metric)") == list(HEADLINE)
        shown = tiles.locator(".value").all_inner_texts()
        assert shown == [format_metric(k, metrics.get(k)) for k in HEADLINE]
        assert tiles.first.get_attribute("title") == DEFINITIONS["net_assets"]
        assert page.is_visible("#normalised-score[data-slot=normalised-score]")
        config = page.locator("details#agent-config")
        assert config.get_attribute("open") is None and not page.is_visible("details#agent-config pre")
        assert json.loads(page.locator("details#agent-config pre").text_content()) == run.meta["agent_config"]
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        assert visit.errors == []


def _visible_days(page):
    return page.evaluate("Array.from(document.querySelectorAll('#day-table tbody tr')).filter(r => !r.hidden).length")


@pytest.mark.slow
def test_charts_are_drawn_offline(run, tmp_path):
    with offline_page(run.run_dir / "report.html", tmp_path / "profile") as visit:
        wait_until_painted(visit.page, RUN_CHARTS, SERIES, DATA_PIXELS)
        for chart in RUN_CHARTS:
            px = canvas_pixels(visit.page, chart, SERIES)
            assert px["canvases"] >= 1 and px["matching"] >= DATA_PIXELS, (chart, px)
        assert visit.blocked == [] and visit.errors == []


@pytest.mark.slow
def test_day_filters_in_the_browser(run, tmp_path):
    table, _ = day_table(run, findings(run))
    acted = int((table["accepted"] > 0).sum())
    ordered = int(table["actions"].str.contains("place_order").sum())
    assert 0 < acted < DAYS and 0 < ordered < DAYS  # the filters have something to separate
    with offline_page(run.run_dir / "report.html", tmp_path / "profile") as visit:
        page = visit.page
        assert page.inner_text("#day-count") == f"{DAYS} of {DAYS} days shown"
        page.check("#day-filters input[name=acted]")
        assert _visible_days(page) == acted
        page.click("#day-filters button[type=reset]")
        page.fill("#day-filters input[name=text]", "place_order")
        assert _visible_days(page) == ordered
        page.fill("#day-filters input[name=text]", "")
        page.fill("#day-filters input[name=from]", "3")
        page.fill("#day-filters input[name=to]", "5")
        assert _visible_days(page) == 3 and page.inner_text("#day-count") == f"3 of {DAYS} days shown"
        assert visit.errors == []


@pytest.mark.slow
def test_a_finding_link_shows_its_day_even_when_filtered_out(hand_run, tmp_path):
    path = tmp_path / "report.html"
    path.write_text(run_html(hand_run, compute_metrics(hand_run)), encoding="utf-8")
    with offline_page(path, tmp_path / "profile") as visit:
        page = visit.page
        page.fill("#day-filters input[name=to]", "2")  # hides day 3
        assert page.evaluate("document.getElementById('day-3').hidden")
        page.click('a[href="#day-3"] >> nth=0')
        page.wait_for_function("!document.getElementById('day-3').hidden")
        assert _visible_days(page) == 3 and visit.errors == []

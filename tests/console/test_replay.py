"""The replay app: pages and JSON of run folders, and the day slider in headless Chromium."""

from __future__ import annotations

import re
import urllib.error
import urllib.request

import pandas as pd
import pytest

from autovend.console.replay import replay_app
from autovend.console.server import running
from autovend.evaluation.rundata import RunData

from .conftest import DAYS, browser_page, get_json


def money(x: float) -> str:
    return f"{x:,.2f}"


@pytest.fixture(scope="module")
def served(baseline_runs):
    runs = [RunData.load(d) for d in baseline_runs]
    with running(replay_app(runs)) as url:
        yield url, [pd.read_csv(d / "daily.csv") for d in baseline_runs]


def net_assets_shown(page: str) -> list[str]:
    return re.findall(r'data-kpi="net_assets"><span class="label">net assets</span><span class="value">([^<]+)<', page)


@pytest.mark.slow
def test_the_page_opens_every_run_on_its_last_day(served):
    url, daily = served
    page = urllib.request.urlopen(url).read().decode()
    assert page.count('<section class="run"') == 2
    assert f'<input type="range" id="day" min="1" max="{DAYS}" value="{DAYS}" step="1">' in page
    assert net_assets_shown(page) == [money(d["net_assets"][DAYS - 1]) for d in daily]
    assert page.count(f'<h3 class="day-title">Day {DAYS} · ') == 2
    assert "<script src" not in page and "<link" not in page and "http" not in page.replace(url, "")


@pytest.mark.parametrize("asked,day", [("1", 1), ("7", 7), ("99", DAYS), ("0", 1), ("x", DAYS)])
def test_a_day_in_the_address_opens_that_day(served, asked, day):
    url, daily = served
    page = urllib.request.urlopen(f"{url}?day={asked}").read().decode()
    assert f'value="{day}" step="1"><b id="day-label">{day}</b>' in page
    assert net_assets_shown(page) == [money(d["net_assets"][day - 1]) for d in daily]


def test_a_day_as_html_and_as_json(served):
    url, daily = served
    fragment = urllib.request.urlopen(url + "runs/1/days/6").read().decode()
    assert fragment.startswith('<h3 class="day-title">Day 6 · ' + daily[1]["date"][5] + "</h3>")
    assert f'<span class="value">{money(daily[1]["net_assets"][5])}</span>' in fragment
    day = get_json(url + "api/runs/1/days/6")
    assert day["ledger"]["net_assets"] == daily[1]["net_assets"][5]
    assert sum(m["units"] for m in day["machines"]) == daily[1]["shelf_units"][5] > 0
    assert sum(w[2] for w in day["warehouse"]) == daily[1]["warehouse_units"][5]
    assert day["calls"][-1]["tool"] == "end_day"
    runs = get_json(url + "api/runs")
    assert [r["label"] for r in runs] == ["baseline-s1", "baseline-s2"]
    assert runs[0]["net_assets"] == daily[0]["net_assets"].tolist()


def test_days_and_runs_outside_are_404(served):
    url, _ = served
    for path, message in [
        ("api/runs/0/days/11", "run 0 has days 1-10, not 11"),
        ("runs/2/days/1", "there is no run 2"),
    ]:
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(url + path)
        assert err.value.code == 404 and message in err.value.read().decode()


@pytest.mark.slow
def test_the_slider_moves_every_panel_in_chromium(served, tmp_path):
    url, daily = served
    with browser_page(url + "?day=1", tmp_path / "profile") as visit:
        page = visit.page
        kpi = "section.run[data-run='{}'] [data-kpi=net_assets] .value"
        assert page.inner_text(kpi.format(0)) == money(daily[0]["net_assets"][0])
        marker = page.get_attribute("section.run[data-run='0'] .marker", "x1")
        page.fill("#day", "6")  # a range input takes fill(); it fires the input event
        page.wait_for_function("document.body.dataset.day === '6'")
        page.wait_for_function(
            "() => [...document.querySelectorAll('.day-title')].every(h => h.textContent.startsWith('Day 6 '))"
        )
        assert page.inner_text("#day-label") == "6"
        for i in (0, 1):
            assert page.inner_text(kpi.format(i)) == money(daily[i]["net_assets"][5])
            assert page.inner_text(f"section.run[data-run='{i}'] [data-kpi=cash] .value") == money(daily[i]["cash"][5])
        assert float(page.get_attribute("section.run[data-run='0'] .marker", "x1")) > float(marker)
        shelves = page.locator("section.run[data-run='0'] .machine").count()
        assert shelves == 4
        assert page.evaluate("location.search") == "?day=6"  # the address links to the day shown
        page.reload()
        assert page.inner_text("#day-label") == "6" and page.inner_text(kpi.format(1)) == money(
            daily[1]["net_assets"][5]
        )
        assert visit.errors == [] and visit.blocked == []


@pytest.mark.slow
def test_a_day_link_opens_on_that_day_with_names_on_the_shelves_and_a_readable_axis(served, baseline_runs, tmp_path):
    url, daily = served
    run = RunData.load(baseline_runs[0])
    names = dict(zip(run.world.catalog["sku_id"].astype(str), run.world.catalog["name"].astype(str), strict=True))
    with browser_page(url + "?day=7", tmp_path / "profile") as visit:
        page = visit.page
        assert page.input_value("#day") == "7" and page.inner_text("#day-label") == "7"
        assert page.inner_text("section.run[data-run='0'] .day-title").startswith("Day 7 · ")
        marker = page.locator("section.run[data-run='0'] .marker")
        x0, dx = float(marker.get_attribute("data-x0")), float(marker.get_attribute("data-dx"))
        assert float(marker.get_attribute("x1")) == pytest.approx(x0 + 6 * dx, abs=0.1)
        rows = page.locator("section.run[data-run='0'] .machine tbody tr")
        assert rows.count() > 0
        for i in range(rows.count()):
            name, sku = rows.nth(i).locator(".name").inner_text(), rows.nth(i).locator(".id").inner_text()
            assert names[sku] == name  # the product's name beside its id
        ticks = page.locator("section.run[data-run='0'] svg.chart text.ytick").all_inner_texts()
        low, high = daily[0][["net_assets", "cash", "inventory_at_cost"]].min().min(), daily[0]["net_assets"].max()
        values = [
            float(v)
            for v in page.locator("section.run[data-run='0'] svg.chart text.ytick").evaluate_all(
                "ts => ts.map(t => t.dataset.value)"
            )
        ]
        assert len(ticks) >= 4 and values[0] <= low and values[-1] >= high
        assert visit.errors == [] and visit.blocked == []

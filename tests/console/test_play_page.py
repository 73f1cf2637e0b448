"""The play page in headless Chromium at 1280 px, as a newcomer meets it: the rules, the day's prompt, and a
call's result as tables, a rejected item in red with its reason."""

from __future__ import annotations

import dataclasses

import pytest

from autovend.console.episode import PlayEpisode
from autovend.console.play import play_app
from autovend.console.server import running
from autovend.world.bundle import load_world

from .conftest import ROOT, browser_page

RED = "rgb(180, 35, 24)"  # .error in console.css
OVERFLOWING = """() => [...document.querySelectorAll('#state table, #rules table')]
  .map(t => t.parentElement).filter(p => p.scrollWidth > p.clientWidth + 1)
  .map(p => p.querySelector('table').outerHTML.slice(0, 80))"""


@pytest.fixture(scope="module")
def world():
    """cn20 (20 machines, its long location names) with a visit fee of its own: the page must quote the world."""
    cn20 = load_world(ROOT / "worlds" / "cn20")
    return dataclasses.replace(cn20, economics=cn20.economics.model_copy(update={"visit_fee": 47.5}))


@pytest.fixture
def page(world, tmp_path):
    episode = PlayEpisode(world, 1, tmp_path / "run", days=2).start()
    try:
        with running(play_app(episode)) as url, browser_page(url, tmp_path / "profile", 1280, 900) as visit:
            yield visit
            assert visit.errors == [] and visit.blocked == []
    finally:
        episode.close()


def colour(locator) -> str:
    return locator.evaluate("e => getComputedStyle(e).color")


def test_the_rules_and_the_days_prompt_are_on_the_page_and_nothing_is_clipped(page):
    p = page.page
    assert p.is_visible("#rules tr[data-rule=visit-fee]")  # open on day 1
    assert "47.5 CNY per machine touched on a day" in p.inner_text("#rules tr[data-rule=visit-fee]")
    assert "200 units each (20 machines)" in p.inner_text("#rules tr[data-rule=machine-capacity]")
    assert p.inner_text("#day-prompt summary").endswith("Day 1 of 180 — Wednesday, 2025-01-01.")
    p.click("#day-prompt summary")
    assert '"balance"' in p.inner_text("#day-prompt pre")
    p.click("#system-prompt summary")
    assert "Each machine they touch costs 47.5 for that day" in p.inner_text("#system-prompt pre")
    assert p.locator("#state table").filter(has_text="CN_WORKSITE_01").locator("tbody tr").count() == 20
    assert p.evaluate(OVERFLOWING) == []
    assert p.evaluate("document.documentElement.scrollWidth") <= 1280


def test_a_rejected_item_is_red_and_names_its_reason(page):
    p = page.page
    p.click("#tool-place_order summary")
    form = p.locator("form[data-tool=place_order]")
    form.locator("[data-key=sku_id]").fill("SKU00001")
    form.locator("[data-key=qty]").fill("24")
    form.locator("button.add-row").click()
    second = form.locator("tr.row").nth(1)
    second.locator("[data-key=sku_id]").fill("SKU99999")
    second.locator("[data-key=qty]").fill("10")
    form.locator("button[type=submit]").click()
    p.wait_for_function("document.body.dataset.calls === '1'")

    status = p.locator("#result-status")
    assert status.inner_text() == "place_order: 1 of 2 items rejected" and colour(status) == RED
    result = p.locator("#result-panel")  # at the top of the left column, scrolled into view
    assert result.locator(".status-line").inner_text() == "#1 place_order on day 1: 1 of 2 items rejected"
    rejected = result.locator("table.rejected tbody tr")
    assert rejected.count() == 1 and colour(rejected.locator("td").first) == RED
    cells = rejected.locator("td").all_inner_texts()
    assert cells[:4] == ["2", "SKU99999", "10", "unknown_sku"]
    assert cells[4].startswith("sku_id 'SKU99999' is not in the catalog")
    accepted = result.locator("table.accepted tbody tr").locator("td").all_inner_texts()
    assert accepted[:4] == ["1", "1", "SKU00001", "24"]
    box = result.locator(".status-line").bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 900  # scrolled into view
    assert result.locator("details.json pre").count() == 1 and not result.locator("details.json").get_attribute("open")
    today = p.locator("#state .calls details.call")
    assert today.count() == 1 and today.get_attribute("data-status") == "error"
    assert colour(today.locator("summary span.error")) == RED
    assert p.inner_text("#head-line").startswith("day 1 of 2")

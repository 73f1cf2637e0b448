"""The end of a played episode in headless Chromium: the scoring state, the report's link, no error on the page.

The evaluation is held on an event, so the time between the last `end_day` and the finished run folder is as
long as the test needs: the page must say the run is being scored, `/report` must answer a page that says so
(503, reloading itself; not raw JSON), and once the report is written the page becomes the finished page, with
the report's link and without any script error (it used to throw "reading 'textContent'" of the tool schemas it
no longer holds). The 2-day horizon is shorter than the 3-day delivery: the page and the command warn of it.
"""

from __future__ import annotations

import threading
import urllib.error
import urllib.request

import pytest

import autovend.evaluation
from autovend.console.episode import PlayEpisode
from autovend.console.play import play_app
from autovend.console.rules import horizon_warning
from autovend.console.server import running

from .conftest import browser_page, small_world


def _get(url: str) -> tuple[int, str, str]:
    """(status, Content-Type, body) whatever the status."""
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.headers["Content-Type"], r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()


@pytest.fixture
def held_evaluation(monkeypatch):
    """The run's evaluation waits until the event is set (at most 120 s)."""
    gate, started = threading.Event(), threading.Event()
    real = autovend.evaluation.write_run_outputs

    def held(*args, **kwargs):
        started.set()
        gate.wait(120)
        return real(*args, **kwargs)

    monkeypatch.setattr(autovend.evaluation, "write_run_outputs", held)
    yield gate, started
    gate.set()


def test_the_last_day_shows_the_scoring_then_the_report_link_without_errors(held_evaluation, tmp_path):
    gate, started = held_evaluation
    world = small_world()
    episode = PlayEpisode(world, 1, tmp_path / "run", days=2).start()
    try:
        with running(play_app(episode)) as url, browser_page(url, tmp_path / "profile", 1280, 900) as visit:
            p = visit.page
            assert p.inner_text("#horizon-warning") == horizon_warning(world, 2)
            assert "promised for day 4" in p.inner_text("#horizon-warning")
            status, kind, body = _get(url + "report")
            assert (status, kind.split(";")[0]) == (404, "text/html") and "day 1 of 2 is being played" in body
            for n in (1, 2):
                p.click("#tool-end_day form button[type=submit]")
                if n == 1:
                    p.wait_for_function("document.body.dataset.calls === '1'")
            assert started.wait(60)
            p.wait_for_selector("#scoring", timeout=30_000)  # the panel polls the state while the run is scored
            assert p.inner_text("#result-status").startswith("end_day: the last day, scoring the run")
            assert "scoring the run and writing the report" in p.inner_text("#head-line")
            status, kind, body = _get(url + "report")
            assert (status, kind.split(";")[0]) == (503, "text/html") and "being scored" in body
            assert '<meta http-equiv="refresh" content="2">' in body
            gate.set()
            finished_page = "!document.getElementById('tool-schemas') && !!document.getElementById('report-link')"
            p.wait_for_function(finished_page, timeout=60_000)  # the page reloads as the finished page
            assert p.inner_text("#play-status h2") == "The episode is over: 2 days settled"
            assert p.locator("#horizon-warning").count() == 0 and p.locator("#tool-schemas").count() == 0
            p.click("#report-link")
            p.wait_for_selector("#scorecard", timeout=30_000)
            assert p.title().startswith("Run ")
            assert visit.errors == [] and visit.console_errors == [] and visit.blocked == []
    finally:
        episode.close()


def test_the_finished_page_loads_without_a_script_error(tmp_path):
    episode = PlayEpisode(small_world(), 1, tmp_path / "run", days=4).start()
    try:
        for _ in range(4):
            episode.call("end_day", {})
        assert episode.finished
        with running(play_app(episode)) as url, browser_page(url, tmp_path / "profile") as visit:
            visit.page.wait_for_selector("#report-link")
            visit.page.wait_for_timeout(300)  # the script has run
            assert visit.errors == [] and visit.console_errors == []
            assert visit.page.locator("#horizon-warning").count() == 0  # 4 days hold a delivery
            status, kind, _ = _get(url + "report")
    finally:
        episode.close()
    assert status == 200 and kind.startswith("text/html")


def test_the_horizon_warning():
    world = small_world()  # a 3-day nominal lead time
    assert horizon_warning(world, 4) is None and horizon_warning(world, 30) is None
    assert horizon_warning(world, 3) is not None and "This episode lasts 1 day," in horizon_warning(world, 1)

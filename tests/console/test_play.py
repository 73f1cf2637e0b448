"""The play app's JSON API and pages (in process; the browser test drives `autovend console`, tests/cli)."""

from __future__ import annotations

import json
import urllib.request

import pytest

from autovend.console.episode import PlayEpisode
from autovend.console.play import play_app
from autovend.console.server import running
from autovend.evaluation.rundata import read_calls

from .conftest import get_json, post_json, small_world


@pytest.fixture
def served(tmp_path):
    episode = PlayEpisode(small_world(), 1, tmp_path / "run", days=2).start()
    try:
        with running(play_app(episode)) as url:
            yield url, episode
    finally:
        episode.close()


def test_state_and_tools(served):
    url, _ = served
    state = get_json(url + "api/state")
    assert (state["day"], state["days"], state["settled"], state["finished"]) == (1, 2, 0, False)
    assert state["date"] == "2025-01-01" and state["report"]["balance"]["cash"] == 40_000.0 - 12.0
    assert state["prompt"].startswith("Day 1 of 5 — Wednesday, 2025-01-01.\n\n{")  # the day's prompt, as agents get it
    assert len(get_json(url + "api/tools")) == 18


def test_a_tool_call_returns_the_tools_result(served):
    url, episode = served
    status, headers, body = post_json(url + "api/tools/get_weather", {})
    assert status == 200 and headers["X-AutoVend-Tool-Ok"] == "true" and "error" not in body
    status, headers, body = post_json(url + "api/tools/get_calendar", {"days_ahead": 0})
    assert status == 200 and headers["X-AutoVend-Tool-Ok"] == "false"
    assert body["error"].startswith(
        "get_calendar: malformed arguments, nothing was done: days_ahead must be at least 1"
    )
    calls = read_calls(episode.run_dir / "trajectory.jsonl")
    assert [(c["tool"], c["ok"]) for c in calls] == [("get_weather", True), ("get_calendar", False)]


@pytest.mark.parametrize(
    "path,body,content_type,status,message",
    [
        pytest.param(
            "api/tools/sell_everything", {}, "application/json", 404, "there is no tool 'sell_everything'", id="no-tool"
        ),
        pytest.param(
            "api/tools/get_weather",
            [1],
            "application/json",
            400,
            "must be a JSON object, got an array of 1 item",
            id="list",
        ),
        pytest.param(
            "api/tools/get_weather", None, "application/json", 400, "must be a JSON object, got null", id="null"
        ),
        pytest.param(
            "api/tools/get_weather", "x", "application/json", 400, 'must be a JSON object, got a string ("x")', id="str"
        ),
        pytest.param("api/tools/get_weather", {}, "text/plain", 415, "Content-Type: application/json", id="plain"),
    ],
)
def test_bad_requests_touch_nothing(served, path, body, content_type, status, message):
    url, episode = served
    got, _, answer = post_json(url + path, body, content_type)
    assert got == status and message in answer["error"]
    assert read_calls(episode.run_dir / "trajectory.jsonl") == []


def test_end_day_through_the_api_to_the_end(served):
    url, episode = served
    status, _, body = post_json(url + "api/tools/end_day", {})
    assert status == 200 and body["settled"]["day"] == 1 and body["next_day"].startswith("Day 2 of 5")
    assert get_json(url + "api/state")["day"] == 2
    status, _, body = post_json(url + "api/tools/end_day", {})
    assert status == 200 and body["settled"]["day"] == 2
    state = get_json(url + "api/state")  # the reply to the last end_day comes once the run folder is complete
    assert (state["day"], state["settled"], state["finished"]) == (2, 2, True)
    metrics = json.loads((episode.run_dir / "metrics.json").read_text())
    assert state["metrics"] == metrics and state["report"]["balance"]["net_assets"] == metrics["net_assets"] == 39_976.0
    status, _, body = post_json(url + "api/tools/get_weather", {})
    assert status == 409 and "the episode is over (2 days settled)" in body["error"]
    page = urllib.request.urlopen(url).read().decode()
    assert "The episode is over: 2 days settled" in page and '<table class="metrics">' in page
    assert urllib.request.urlopen(url + "report").read() == (episode.run_dir / "report.html").read_bytes()

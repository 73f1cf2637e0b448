"""`autovend console`: the command's choices, and a played episode in headless Chromium, stopped and resumed."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from autovend.cli import app
from autovend.errors import ConfigError, OutputExistsError
from autovend.evaluation.rundata import read_calls

from ..console.conftest import (  # noqa: F401
    baseline_runs,
    browser_page,
    console_process,
    get_json,
    post_json,
    small_bundle,
)


@pytest.mark.parametrize(
    "args,message",
    [
        pytest.param([], "give --run RUN to replay a run, or --world W --seed S --out RUN", id="nothing"),
        pytest.param(["--run", "r", "--world", "w"], "give either --run RUN (replay) or --world W", id="both"),
        pytest.param(["--world", "w"], "give --run RUN to replay a run, or --world W --seed S --out RUN", id="no-out"),
    ],
)
def test_the_command_says_what_to_give(args, message):
    result = CliRunner().invoke(app, ["console", *args])
    assert isinstance(result.exception, ConfigError) and message in str(result.exception)


@pytest.mark.slow
def test_a_console_reachable_from_other_machines_needs_a_token(monkeypatch, baseline_runs):  # noqa: F811
    monkeypatch.delenv("AUTOVEND_CONSOLE_TOKEN", raising=False)
    result = CliRunner().invoke(app, ["console", "--run", str(baseline_runs[0]), "--host", "0.0.0.0"])
    assert isinstance(result.exception, ConfigError)
    assert str(result.exception).startswith(
        "--host 0.0.0.0 is reachable from other machines: clients must send a bearer token. Set it in the "
        "environment variable AUTOVEND_CONSOLE_TOKEN"
    )


def test_a_finished_run_is_not_played_again(small_bundle, tmp_path):  # noqa: F811
    out = tmp_path / "done"
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"finished": True}))
    result = CliRunner().invoke(app, ["console", "--world", str(small_bundle), "--out", str(out)])
    assert isinstance(result.exception, OutputExistsError)
    assert f"look at it with `autovend console --run {out}`" in str(result.exception)


@pytest.mark.slow
def test_play_a_day_in_the_page_then_resume_and_end_through_the_api(small_bundle, tmp_path):  # noqa: F811
    out = tmp_path / "me-s1"
    args = ["--world", str(small_bundle), "--seed", "1", "--out", str(out), "--days", "2"]
    with console_process(*args) as url, browser_page(url, tmp_path / "profile") as visit:
        page = visit.page
        assert page.inner_text("#head-line").startswith("day 1 of 2 · Wednesday, 2025-01-01 · net assets 39,988.00")
        page.click("#tool-place_order summary")
        form = page.locator("form[data-tool=place_order]")
        form.locator("[data-key=sku_id]").fill("SKU0001")
        form.locator("[data-key=qty]").fill("5")
        form.locator("button.add-row").click()
        second = form.locator("tr.row").nth(1)
        second.locator("[data-key=sku_id]").fill("SKU0002")
        second.locator("[data-key=qty]").fill("3")
        form.locator("button[type=submit]").click()
        page.wait_for_function("document.getElementById('result-status').textContent === 'place_order: ok'")
        accepted = page.locator("#result table.accepted tbody tr")  # the result, as a table
        assert accepted.count() == 2 and page.locator("#result table.rejected").count() == 0
        page.wait_for_selector("text=Today's calls (1)")
        page.click("#tool-get_calendar summary")
        calendar = page.locator("form[data-tool=get_calendar]")
        calendar.locator("[data-key=days_ahead]").fill("0")
        calendar.locator("button[type=submit]").click()
        page.wait_for_function("document.getElementById('result-status').textContent === 'get_calendar: refused'")
        assert "days_ahead must be at least 1, got 0" in page.inner_text("#result")
        page.click("form[data-tool=end_day] button[type=submit]")
        page.wait_for_selector("#play-status[data-day='2']", state="attached")
        assert page.inner_text("#head-line").startswith("day 2 of 2 · Thursday, 2025-01-02")
        assert visit.errors == [] and visit.blocked == []
    calls = read_calls(out / "trajectory.jsonl")
    assert [(c["day"], c["tool"], c["ok"]) for c in calls] == [
        (1, "place_order", True),
        (1, "get_calendar", False),
        (1, "end_day", True),
    ]
    # the rows in order, the empty optional supplier_id left out
    assert calls[0]["arguments"] == {"items": [{"sku_id": "SKU0001", "qty": 5}, {"sku_id": "SKU0002", "qty": 3}]}
    assert (out / "checkpoint" / "checkpoint.pkl").exists() and not (out / "metrics.json").exists()

    with console_process(*args) as url:  # the same command again: the episode goes on at day 2
        assert get_json(url + "api/state")["day"] == 2
        status, _, body = post_json(url + "api/tools/end_day", {})
        assert status == 200 and body["settled"]["day"] == 2
        state = get_json(url + "api/state")
        assert state["finished"] and state["settled"] == 2
        with browser_page(url, tmp_path / "profile2") as visit:
            assert "The episode is over: 2 days settled" in visit.page.inner_text("#state")
    metrics = json.loads((out / "metrics.json").read_text())
    assert state["metrics"] == metrics and metrics["tool_calls"] == 4
    assert [c["tool"] for c in read_calls(out / "trajectory.jsonl")][-1] == "end_day"
    run = json.loads((out / "run.json").read_text())
    assert (run["agent"], run["resumed_from_day"], run["finished"], run["world_path"]) == (
        "human",
        1,
        True,
        str(small_bundle),
    )
    for name in ("report.md", "report.html", "daily.csv", "records.sqlite", "hidden.sqlite"):
        assert (out / name).exists(), name


@pytest.mark.slow
def test_replay_of_two_runs_from_the_command(baseline_runs):  # noqa: F811
    args = [a for d in baseline_runs for a in ("--run", str(d))]
    with console_process(*args) as url:
        runs = get_json(url + "api/runs")
        assert [(r["label"], r["seed"], r["days"]) for r in runs] == [("baseline-s1", 1, 10), ("baseline-s2", 2, 10)]
        day = get_json(url + "api/runs/1/days/10")
    daily = (baseline_runs[1] / "daily.csv").read_text().splitlines()
    assert day["date"] == daily[-1].split(",")[1] == "2025-01-10"

"""`autovend replay RUN_DIR --day N` on an LLM run (transcript) and on a run with only a trajectory."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from autovend.cli import app
from autovend.errors import ConfigError, RunFolderError
from autovend.session import ToolSession
from tests.agents.llm.conftest import make_agent, make_world, play
from tests.agents.llm.fake_openai import FakeOpenAI, Fault


@pytest.fixture(scope="module")
def llm_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("llm-run")
    with FakeOpenAI(faults={3: Fault(429)}) as server:
        play(make_world(), lambda: make_agent(server.base_url), out)
    return out


def test_replay_of_an_llm_day(llm_run):
    result = CliRunner().invoke(app, ["replay", str(llm_run), "--day", "6", "--max-chars", "0"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "Day 6 — openai:fake (fake)"
    assert lines[1] == "── daily prompt ──" and lines[2] == "Day 6 of 8 — Monday, 2025-01-06."
    turns = [line for line in lines if line.startswith("── model turn")]
    assert len(turns) == 3 and "in (" in turns[0] and "cached) /" in turns[0]
    assert "  → get_warehouse {}" in lines
    restock = next(line for line in lines if line.startswith("  → restock"))
    assert '"device_id": "CN_WORKSITE_01", "sku_id": "SKU0001", "qty": 10' in restock
    assert any(line.startswith('  ← restock ok: {"action":"restock","day":6,"n_accepted":2') for line in lines)
    assert lines[-1].startswith("── day ended by the agent (end_day) · 3 turns, 3 tool calls (0 malformed)")


def test_replay_shows_retries_and_cuts_long_text(llm_run):
    result = CliRunner().invoke(app, ["replay", str(llm_run), "--day", "2", "--max-chars", "40"])
    assert result.exit_code == 0, result.output
    assert any(
        line.startswith("── retry after attempt 1: RateLimitError (HTTP 429)") for line in result.output.splitlines()
    )
    assert "more characters; --max-chars 0 shows all]" in result.output


def test_replay_of_a_run_without_transcript(tmp_path):
    session = ToolSession(make_world(), seed=1, trajectory_path=tmp_path / "trajectory.jsonl")
    session.call("place_order", {"items": [{"sku_id": "SKU0001", "qty": 5}]})
    session.call("get_calendar", {"days_ahead": 0})
    session.call("end_day")
    session.close()
    result = CliRunner().invoke(app, ["replay", str(tmp_path), "--day", "1"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "Day 1 — 3 tool calls (no LLM transcript in this run: the trajectory's calls)"
    assert lines[1] == '  → place_order {"items": [{"sku_id": "SKU0001", "qty": 5}]}'
    assert (
        lines[4]
        == "  ← error: get_calendar: malformed arguments, nothing was done: days_ahead must be at least 1, got 0. Fix them and call again."
    )


@pytest.mark.parametrize(
    "day,message",
    [pytest.param(9, "no record of day 9 (it covers days 1-8)", id="after-the-run")],
)
def test_replay_of_a_missing_day(llm_run, day, message):
    result = CliRunner().invoke(app, ["replay", str(llm_run), "--day", str(day)])
    assert isinstance(result.exception, RunFolderError) and message in str(result.exception)


def test_replay_of_a_folder_that_is_no_run(tmp_path):
    result = CliRunner().invoke(app, ["replay", str(tmp_path), "--day", "1"])
    assert isinstance(result.exception, RunFolderError) and "neither llm.jsonl nor trajectory.jsonl" in str(
        result.exception
    )


# ------------------------------------------------------------------ --summary, --tool, ranges, --json


class _Plan:
    """Day 1: 10 x SKU0001 ordered (2.01 each) and a refused get_calendar; day 2: the weather; day 3: nothing."""

    name = "plan"

    def start(self, session):
        pass

    def act_day(self, session):
        if session.day == 1:
            session.call("place_order", {"items": [{"sku_id": "SKU0001", "qty": 10}]})
            session.call("get_calendar", {"days_ahead": 0})
        elif session.day == 2:
            session.call("get_weather", {})
        session.call("end_day", {})

    def state_dict(self):
        return {}

    def load_state(self, state):
        pass


@pytest.fixture(scope="module")
def planned_run(tmp_path_factory):
    from autovend.runner import run_episode
    from autovend.world.model import Economics
    from autovend.world.toy import toy_world

    out = tmp_path_factory.mktemp("planned") / "run"
    world = toy_world(3, 12, seed=0, economics=Economics(horizon_days=5))
    run_episode(world, _Plan(), 1, days=3, out_dir=out, checkpoint="off", evaluate=False)
    return out


def _replay(*args):
    result = CliRunner().invoke(app, ["replay", *map(str, args)])
    return result


def test_summary_of_every_day(planned_run):
    result = _replay(planned_run, "--summary")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["day", "date", "units", "revenue", "purchases", "op.", "costs", "write-offs", "net", "net", "assets", "tool", "calls"]  # fmt: skip
    # 3 machines x 4.00 daily fee; the order's 20.10 left cash but is inventory: net assets 40,000 - 12.00
    assert (
        lines[1]
        == "    1  2025-01-01      0     0.00      20.10      12.00        0.00  -12.00   39,988.00  place_order 1, get_calendar 1, end_day 1 (1 refused)"
    )
    assert lines[2].endswith("  -12.00   39,976.00  get_weather 1, end_day 1")
    assert lines[4].startswith("total  3 days") and "20.10" in lines[4]
    assert lines[4].endswith("end_day 3, place_order 1, get_calendar 1, get_weather 1")


def test_summary_of_a_range_as_json_counting_one_tool(planned_run):
    result = _replay(planned_run, "--summary", "--from", 1, "--to", 2, "--tool", "end_day", "--json")
    assert result.exit_code == 0, result.output
    days = json.loads(result.output)
    assert [(d["day"], d["purchase"], d["operating_costs"], d["net_assets"], d["calls"]) for d in days] == [
        (1, 20.1, 12.0, 39_988.0, {"end_day": 1}),
        (2, 0.0, 12.0, 39_976.0, {"end_day": 1}),
    ]


def test_calls_of_one_tool_as_json_and_text(planned_run):
    result = _replay(planned_run, "--tool", "place_order", "--tool", "get_weather", "--json")
    assert result.exit_code == 0, result.output
    calls = json.loads(result.output)
    assert [(c["day"], c["tool"]) for c in calls] == [(1, "place_order"), (2, "get_weather")]
    assert calls[0]["arguments"] == {"items": [{"sku_id": "SKU0001", "qty": 10}]}
    text = _replay(planned_run, "--from", 2, "--to", 3, "--tool", "get_weather").output.splitlines()
    assert text[0] == "Day 2 — 1 tool calls (no LLM transcript in this run: the trajectory's calls)"
    assert text[1] == "  → get_weather {}" and len(text) == 3


def test_a_run_under_way_is_summed_from_its_trajectory(planned_run, tmp_path):
    import shutil

    copy = tmp_path / "under-way"
    shutil.copytree(planned_run, copy)
    (copy / "daily.csv").unlink()  # daily.csv is written when a run ends
    lines = _replay(copy, "--summary", "--day", 1).output.splitlines()
    assert lines[1].split()[:7] == ["1", "2025-01-01", "0", "0.00", "–", "12.00", "0.00"]


@pytest.mark.parametrize(
    "args,error,message",
    [
        pytest.param(["--day", 1, "--from", 1], ConfigError, "give either --day N or a range", id="day-and-range"),
        pytest.param(["--summary", "--to", 4], RunFolderError, "the run covers days 1-3, not 1-4", id="past-the-end"),
        pytest.param(["--tool", "sell"], ConfigError, "--tool 'sell' is not a tool", id="no-such-tool"),
    ],
)
def test_bad_choices_are_named(planned_run, args, error, message):
    result = _replay(planned_run, *args)
    assert isinstance(result.exception, error) and message in str(result.exception)

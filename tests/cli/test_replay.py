"""`autovend replay RUN_DIR --day N` on an LLM run (transcript) and on a run with only a trajectory."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from autovend.cli import app
from autovend.errors import RunFolderError
from autovend.tools.session import ToolSession
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

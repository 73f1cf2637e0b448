"""Resume: after the model endpoint gives up, and after the process is killed mid-day."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from autovend.agents.llm.transcript import read_transcript
from autovend.env.boundary import simulator_of
from autovend.errors import LLMError
from autovend.sim.records import RECORD_TABLES
from autovend.tools.trajectory import read_trajectory
from tests.agents.llm.conftest import make_agent, play
from tests.agents.llm.fake_openai import FakeOpenAI, parse_request

ROOT = Path(__file__).resolve().parents[3]


def _calls(out: Path) -> list[dict]:
    """The trajectory's calls without their timings (wall_ms differs between runs)."""
    return [
        {k: v for k, v in r.items() if k != "wall_ms"}
        for r in read_trajectory(out / "trajectory.jsonl")
        if r["kind"] == "call"
    ]


def _responses(out: Path) -> list[tuple]:
    return [
        (r["day"], r["turn"], r["message"], r["usage"]["input_tokens"], r["usage"]["output_tokens"])
        for r in read_transcript(out / "llm.jsonl")
        if r["kind"] == "response"
    ]


@pytest.fixture(scope="module")
def uninterrupted(world, tmp_path_factory):
    out = tmp_path_factory.mktemp("whole")
    with FakeOpenAI() as server:
        session, agent = play(world, lambda: make_agent(server.base_url), out)
    return {"out": out, "session": session, "agent": agent, "server": server}


def _same_run(out: Path, session, agent, ref) -> None:
    assert session.done and simulator_of(session).net_assets == simulator_of(ref["session"]).net_assets
    assert simulator_of(session).cash == simulator_of(ref["session"]).cash
    for table in RECORD_TABLES:  # every agent-visible record, row for row
        pd.testing.assert_frame_equal(
            simulator_of(session).records.frame(table.name), simulator_of(ref["session"]).records.frame(table.name)
        )
    assert _calls(out) == _calls(ref["out"])
    assert agent.conversation.messages == ref["agent"].conversation.messages
    assert _responses(out) == _responses(ref["out"])
    kept = agent.usage()
    whole = ref["agent"].usage()
    discarded = kept["discarded"]
    assert kept["input_tokens"] - discarded["input_tokens"] == whole["input_tokens"]
    assert kept["output_tokens"] - discarded["output_tokens"] == whole["output_tokens"]


def test_resume_after_the_endpoint_gives_up(world, tmp_path, uninterrupted):
    # requests: day 1-3 two each (1-6); day 4 turn 1 is request 7; from request 8 on the server fails
    sleeps: list[float] = []
    with FakeOpenAI(fail_from=8) as server, pytest.raises(LLMError, match="gave up after 3 attempts") as err:
        play(world, lambda: make_agent(server.base_url, sleeps=sleeps, max_attempts=3), tmp_path)
    assert "HTTP 500" in str(err.value) and "--resume" in str(err.value)
    assert len(server.requests) == 7 + 3 and len(sleeps) == 2
    records = read_transcript(tmp_path / "llm.jsonl")
    assert records[-1]["kind"] == "error" and records[-1]["day"] == 4
    with FakeOpenAI() as healthy:
        session, agent = play(world, lambda: make_agent(healthy.base_url), tmp_path, resume=True)
    _same_run(tmp_path, session, agent, uninterrupted)
    # day 4's first answer was paid for and set aside: it still counts in the cost
    lost = read_transcript(tmp_path / "llm.discarded.jsonl")
    answered = [r for r in lost if r["kind"] == "response"]
    assert [(r["day"], r["turn"]) for r in answered] == [(4, 1)]
    usage = agent.usage()
    assert usage["discarded"]["requests"] == 1
    assert usage["discarded"]["input_tokens"] == server.answered[6]["usage"]["prompt_tokens"]
    resume = [r for r in read_transcript(tmp_path / "llm.jsonl") if r["kind"] == "resume"]
    assert len(resume) == 1 and resume[0]["discarded_days"] == [4]
    assert not any(r["kind"] == "error" for r in read_transcript(tmp_path / "llm.jsonl"))


@pytest.mark.slow
def test_resume_after_a_kill(tmp_path, uninterrupted):
    with FakeOpenAI(hang_at=(5, 2)) as server:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.agents.llm.drive", server.base_url, str(tmp_path)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert server.hung.wait(60), proc.stderr.read().decode() if proc.poll() is not None else "no request"
            os.kill(proc.pid, signal.SIGKILL)  # mid-day 5, while the model "thinks"
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == -signal.SIGKILL
        partial = [r["day"] for r in _calls(tmp_path)]
        assert partial.count(5) == 2  # day 5 had started: get_warehouse and read_memory ran
        server.hang_at = None
        server.release.set()
        from tests.agents.llm.conftest import make_world

        session, agent = play(make_world(), lambda: make_agent(server.base_url), tmp_path, resume=True)
    _same_run(tmp_path, session, agent, uninterrupted)
    assert [parse_request(b).day for b in server.requests].count(5) == 2 + 2  # day 5 asked twice, answered once
    assert agent.usage()["discarded"]["requests"] == 1  # day 5 turn 1, answered before the kill

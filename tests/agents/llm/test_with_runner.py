"""The LLM agent under the real runner (`autovend.runner.run_episode`): run.json accounting and resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from autovend.errors import LLMError
from autovend.runner import run_episode
from autovend.tools.trajectory import read_trajectory
from tests.agents.llm.conftest import SEED, make_agent, make_world
from tests.agents.llm.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parents[3]


def _run(out: Path, agent, resume: bool = False):
    return run_episode(make_world(), agent, SEED, out_dir=out, resume=resume, checkpoint="sync", evaluate=False)


def _calls(out: Path) -> list[dict]:
    return [
        {k: v for k, v in r.items() if k != "wall_ms"}
        for r in read_trajectory(out / "trajectory.jsonl")
        if r["kind"] == "call"
    ]


@pytest.fixture(scope="module")
def whole(tmp_path_factory, prices_file):
    out = tmp_path_factory.mktemp("runner-whole")
    with FakeOpenAI() as server:
        summary = _run(out, make_agent(server.base_url, prices_file))
    return {"out": out, "summary": summary, "server": server}


def test_run_json_carries_tokens_and_cost(whole):
    meta = json.loads((whole["out"] / "run.json").read_text())
    usage = [a["usage"] for a in whole["server"].answered]
    tokens = meta["token_usage"]
    assert meta["agent"] == "openai:fake" and meta["finished"] is True
    assert tokens["requests"] == 19 and tokens["model"] == "fake" and tokens["price_entry"] == "fake"
    assert tokens["input_tokens"] == sum(u["prompt_tokens"] for u in usage)
    fresh = tokens["input_tokens"] - tokens["cached_tokens"]
    cost = (fresh * 2.0 + tokens["cached_tokens"] * 0.5 + tokens["output_tokens"] * 8.0) / 1e6
    assert meta["api_cost_usd"] == pytest.approx(cost, abs=1e-6)
    assert meta["agent_config"]["max_turns_per_day"] == 50
    assert (whole["out"] / "llm.jsonl").exists()


def test_runner_resume_after_the_endpoint_gives_up(whole, tmp_path, prices_file):
    with FakeOpenAI(fail_from=8) as server, pytest.raises(LLMError, match="gave up after 2 attempts"):
        _run(tmp_path, make_agent(server.base_url, prices_file, max_attempts=2))
    with FakeOpenAI() as healthy:
        summary = _run(tmp_path, make_agent(healthy.base_url, prices_file), resume=True)
    assert summary.resumed_from == 3 and summary.final_net_assets == whole["summary"].final_net_assets
    assert _calls(tmp_path) == _calls(whole["out"])
    meta = json.loads((tmp_path / "run.json").read_text())
    assert meta["token_usage"]["discarded"]["requests"] == 1  # day 4, turn 1: paid for, then replayed


@pytest.mark.slow
def test_runner_resume_after_a_kill(whole, tmp_path, prices_file):
    with FakeOpenAI(hang_at=(5, 2)) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.agents.llm.drive", server.base_url, str(tmp_path), "--runner"],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            assert server.hung.wait(60), proc.stderr.read().decode() if proc.poll() is not None else "no request"
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
        server.hang_at = None
        server.release.set()
        summary = _run(tmp_path, make_agent(server.base_url), resume=True)
    assert summary.resumed_from == 4 and summary.final_net_assets == whole["summary"].final_net_assets
    assert _calls(tmp_path) == _calls(whole["out"])

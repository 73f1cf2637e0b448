"""Scored MCP play: `autovend serve --out RUN` over stdio, driven by the SDK's client, against the runner in process.

The baseline agent plays a 6-day toy world in process (`run_episode`); an MCP client then sends the
same calls to `serve --toy 3x12 --days 6 --out RUN`: days 1-3, a call on day 4, a disconnect (the
server stops), and the same command again, which must go on at day 4 with the day-4 call undone.
The run folder must then hold what the in-process run holds: the same calls with the same results,
the same net assets and the same metrics, written by the same runner and evaluation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from autovend.agents.base import make_agent
from autovend.errors import CheckpointError
from autovend.mcp.play import ScoredPlay
from autovend.runner import CHECKPOINT_DIR, run_episode
from autovend.tools.trajectory import read_trajectory
from autovend.world.model import Economics
from autovend.world.toy import toy_world

pytestmark = pytest.mark.slow  # a module of pipelines, clusters or long episodes

ROOT = Path(__file__).resolve().parents[2]
SEED, DAYS = 1, 6
SCORES = ("net_assets", "waste_rate", "assortment", "shelf_utilization", "empty_share", "tool_calls", "failure_counts")


def _serve(out: Path) -> list[str]:
    return ["-m", "autovend.cli", "serve", "--toy", "3x12", "--days", str(DAYS), "--seed", str(SEED), "--out", str(out)]


def _calls(path: Path) -> list[dict[str, Any]]:
    """The calls of a trajectory without what varies between runs (wall times, query times)."""
    out = []
    for r in read_trajectory(path):
        if r["kind"] != "call":
            continue
        r = {k: v for k, v in r.items() if k != "wall_ms"}
        if isinstance(r.get("result"), dict):
            r["result"] = {k: v for k, v in r["result"].items() if k != "elapsed_ms"}
        out.append(r)
    return out


async def _session(out: Path, actions: list[tuple[str, Any]], until_ends: int | None) -> dict[str, Any]:
    """Connect to `serve ... --out out`, send `actions` until `until_ends` end_day calls have gone (None: all)."""
    params = StdioServerParameters(command=sys.executable, args=_serve(out), cwd=str(ROOT))
    seen: dict[str, Any] = {"results": []}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        seen["daily"] = (await s.get_prompt("daily")).messages[0].content.text
        ends = 0
        for name, args in actions:
            res = await s.call_tool(name, args)
            seen["results"].append((name, res.is_error, res.content[0].text))
            if name == "end_day":
                ends += 1
                seen["metrics_after_last_end"] = (out / "metrics.json").exists()
                if ends == until_ends:
                    break
        seen["checkpoint_at_stop"] = (out / CHECKPOINT_DIR).exists()
        if until_ends is not None:  # a call of the next day, then the connection goes: the server stops
            seen["undone"] = await s.call_tool("write_memory", {"text": "made on day 4, then the server stopped"})
        else:
            seen["after"] = (await s.call_tool("get_weather", {})).content[0].text
            seen["daily_after"] = (await s.get_prompt("daily")).messages[0].content.text
    return seen


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("scored")
    world = toy_world(3, 12, seed=0, economics=Economics(horizon_days=DAYS))
    summary = run_episode(world, make_agent("baseline", SEED), seed=SEED, out_dir=base / "inproc", checkpoint="sync")
    actions = [(c["tool"], c["arguments"]) for c in _calls(base / "inproc" / "trajectory.jsonl")]
    out = base / "mcp"
    first = anyio.run(_session, out, actions, 3)
    ends = [i for i, (name, _) in enumerate(actions) if name == "end_day"]
    second = anyio.run(_session, out, actions[ends[2] + 1 :], None)
    again = subprocess.run([sys.executable, *_serve(out)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    return {"base": base, "summary": summary, "actions": actions, "first": first, "second": second, "again": again}


def test_the_first_server_checkpointed_three_days_and_scored_nothing(played):
    first = played["first"]
    assert [r[0] for r in first["results"]].count("end_day") == 3
    assert not any(is_error for _, is_error, _ in first["results"])
    assert first["checkpoint_at_stop"] and not first["metrics_after_last_end"]
    assert not first["undone"].is_error  # accepted on day 4, then undone by the restart


def test_the_restarted_server_goes_on_at_day_four(played):
    second = played["second"]
    assert second["daily"].splitlines()[0].startswith(f"Day 4 of {DAYS} ")
    assert [r[0] for r in second["results"]].count("end_day") == 3
    assert second["metrics_after_last_end"]  # the last end_day is answered once the run is scored


def test_the_run_folder_is_the_in_process_run(played):
    base = played["base"]
    mcp, inproc = base / "mcp", base / "inproc"
    assert _calls(mcp / "trajectory.jsonl") == _calls(inproc / "trajectory.jsonl")  # day 4's write_memory is gone
    assert len(_calls(mcp / "trajectory.jsonl")) == len(played["actions"]) > DAYS
    ours, theirs = json.loads((mcp / "metrics.json").read_text()), json.loads((inproc / "metrics.json").read_text())
    assert ours["net_assets"] == theirs["net_assets"] == pytest.approx(played["summary"].final_net_assets)
    assert ours["net_assets"] != 40_000  # the baseline traded: the comparison means something
    assert {k: ours[k] for k in SCORES} == {k: theirs[k] for k in SCORES}
    assert (mcp / "report.md").exists() and (mcp / "report.html").exists()
    assert not (mcp / CHECKPOINT_DIR).exists()
    run = json.loads((mcp / "run.json").read_text())
    assert run["finished"] and run["agent"] == "mcp" and run["resumed_from_day"] == 3
    assert run["agent_config"]["transport"] == "stdio" and run["agent_config"]["clients"] == ["mcp 0.1.0"]


def test_after_the_run_calls_are_refused_and_a_new_server_is_refused(played):
    second = played["second"]
    assert second["after"].startswith(f"The episode is over: {DAYS} days were played and settled")
    assert "metrics.json" in second["after"] and second["daily_after"] == second["after"]
    again = played["again"]
    assert again.returncode == 2 and "holds a finished run" in again.stderr and "--force" in again.stderr


def test_a_checkpoint_of_another_seed_is_refused_before_serving(tmp_path):
    world = toy_world(3, 12, seed=0, economics=Economics(horizon_days=DAYS))
    play = ScoredPlay(world, SEED, tmp_path)
    assert play.call("end_day", {}).ok and play.daily()[0] == 2
    play.close()
    assert (tmp_path / CHECKPOINT_DIR).exists() and not play.finished
    assert play.call("get_weather", {}).error.startswith("The server is shutting down")  # a closed play refuses
    with pytest.raises(CheckpointError, match=r"belongs to another run: seed 1 \(now 2\)"):
        ScoredPlay(world, 2, tmp_path)
    again = ScoredPlay(world, SEED, tmp_path)  # the same seed goes on at day 2
    assert again.daily()[0] == 2
    again.close()

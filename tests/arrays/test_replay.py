"""An array run is a normal run folder: its days replayed as tool calls, written by the runner, verified."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autovend.agents.array_baseline import ArrayBaseline
from autovend.agents.array_replay import ArrayReplayAgent, ReplayMismatch
from autovend.arrays.core import ArraySim
from autovend.evaluation.verify import verify_run
from autovend.runner import run_episode
from autovend.session import ToolSession
from autovend.world.bundle import as_world

ROOT = Path(__file__).resolve().parents[2]
DAYS = 24


@pytest.fixture(scope="module")
def cn20_run():
    """Two array-baseline runs of cn20 for DAYS days, the second recorded."""
    world = as_world(ROOT / "worlds" / "cn20")
    sim = ArraySim(world, 2, slots=64, record=[1])
    policy = ArrayBaseline(world, 2, 64)
    obs = sim.reset([5, 6])
    for _ in range(DAYS):
        obs, _, _ = sim.step(policy.act(obs))
    return world, sim


def test_an_array_run_becomes_a_run_folder_that_verify_accepts(cn20_run, tmp_path):
    world, sim = cn20_run
    agent = ArrayReplayAgent(sim.run_calls(1), seed=6)
    out = tmp_path / "array-s6"
    summary = run_episode(
        world, agent, seed=6, days=DAYS, out_dir=out, world_path=ROOT / "worlds" / "cn20", checkpoint="off"
    )
    assert round(summary.final_net_assets * 100) == sim.state.close[1]  # the same run, to the fen
    assert round(summary.final_cash * 100) == sim.state.close_cash[1]
    result = verify_run(out)
    assert result.ok, result.difference.message() if result.difference else ""
    assert sum(len(day) for day in sim.run_calls(1)) > 50  # restocks, prices, orders, discards were played


def test_a_call_the_simulator_refuses_stops_the_replay(cn20_run):
    world, sim = cn20_run
    days = [list(day) for day in sim.run_calls(1)]
    first = next(i for i, day in enumerate(days) if any(tool == "restock" for tool, _ in day))
    tool, args = next((t, a) for t, a in days[first] if t == "restock")
    bad = dict(args["items"][0], qty=10**6)
    days[first] = [("restock", {"items": [bad]}), *days[first]]
    agent = ArrayReplayAgent(days)
    session = ToolSession(world, seed=6)
    for _ in range(first):
        agent.act_day(session)
    with pytest.raises(ReplayMismatch, match="refused restock"):
        agent.act_day(session)
    assert np.isfinite(session.observation()["balance"]["cash"])

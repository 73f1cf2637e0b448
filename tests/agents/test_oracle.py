"""The oracle: its plan's pure parts by hand, a run that beats the baseline, its privileged label, an exact resume.

The 180-day figures on cn20 (oracle 523,624.32 / 524,273.49 / 523,877.86 against the baseline's 274,304.79 /
302,310.68 / 295,052.50 on seeds 1-3) come from the DVC stage oracle_cn20 and benchmarks/bench_headroom.py,
not from this suite (too long for it).
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from autovend.agents.base import make_agent
from autovend.agents.oracle import OracleAgent
from autovend.agents.oracle.plan import best_assortment, expected_sales, fluid_sales, shelf_targets
from autovend.errors import ConfigError
from autovend.runner import run_episode
from autovend.world.model import Economics
from autovend.world.toy import toy_world

PACKAGE = Path(__file__).resolve().parents[2] / "autovend" / "agents" / "oracle"
DAYS = 20


@pytest.fixture(scope="module")
def world():
    return toy_world(4, 30, seed=0, economics=Economics(horizon_days=DAYS))


def test_expected_sales_is_the_smooth_minimum_of_rate_and_stock():
    got = expected_sales(np.array([2.0, 2.0, 0.5, 0.0]), np.array([1.0, 50.0, 0.0, 3.0]))
    # 2 (1 - e^-0.5) = 0.78694; 2 (1 - e^-25) = 2 to 1e-10; no stock sells nothing; no demand sells nothing
    assert got[0] == pytest.approx(2 * (1 - math.exp(-0.5)), abs=1e-12) and round(got[0], 5) == 0.78694
    assert got[1] == pytest.approx(2.0, abs=1e-10) and got[2] == 0.0 and got[3] == 0.0


def _value(w, margin, U, s) -> float:
    """U sum_S w m / (U + sum_S w) of the set s."""
    idx = list(s)
    return U * float(w[idx] @ margin[idx]) / (U + float(w[idx].sum())) if idx else 0.0


def test_best_assortment_is_the_best_set_of_n_by_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(20):
        w, margin, U = rng.uniform(0.1, 5, 7), rng.uniform(-1, 10, 7), float(rng.uniform(0.5, 20))
        allowed = np.ones(7, dtype=bool)
        allowed[rng.integers(7)] = False
        for n in (1, 2, 3):
            sets = [s for k in range(1, n + 1) for s in itertools.combinations(np.flatnonzero(allowed), k)]
            best = max(_value(w, margin, U, s) for s in sets)
            got = best_assortment(w, margin, U, n, allowed)
            assert len(got) <= n and allowed[got].all()
            assert _value(w, margin, U, got) == pytest.approx(best, rel=1e-9)


def test_shelf_targets_give_phi_each_and_the_rest_by_rate():
    rate = np.array([3.0, 1.0, 0.0, 2.0])
    # two products at rates 3 and 1 share 20 units: max(5, 0.75 L) + max(5, 0.25 L) = 20 at L = 20: 15 and 5
    assert shelf_targets(rate, np.array([0, 1]), 20, 5.0).tolist() == [15, 5, 0, 0]
    # three products on 15 units: phi = 5 each, nothing left
    assert shelf_targets(rate, np.array([0, 1, 3]), 15, 5.0).tolist() == [5, 5, 0, 5]
    # more products than room for phi each: the capacity split evenly
    assert shelf_targets(rate, np.array([0, 1, 3]), 12, 5.0).tolist() == [4, 4, 0, 4]


def test_fluid_sales_run_the_shelf_down():
    b = np.array([10.0, 10.0])
    sold, left = fluid_sales(b, 5.0, 20.0, [10.0, 10.0], [1.0, 1.0], phi=5.0, eta=0.5)
    # day 1: F = 1, w = 10 each, W = 20: rates U w / (U + W) = 5 x 10 / 25 = 2 each, sales 2 (1 - e^-5) each
    assert sold[0].tolist() == pytest.approx([2 * (1 - math.exp(-5))] * 2)
    assert left.tolist() == pytest.approx((10 - sold.sum(axis=0)).tolist()) and sold[1, 0] < sold[0, 0]


@pytest.mark.slow  # two 20-day runs with reports and a verify
def test_the_oracle_beats_the_baseline_is_labelled_privileged_and_verifies(world, tmp_path):
    from autovend.evaluation.verify import verify_run
    from autovend.world.bundle import load_world
    from autovend.world.runcopy import write_world_copy

    write_world_copy(world, tmp_path / "toy", "# the toy world\n")  # a bundle verify can find the world in
    world, kept = load_world(tmp_path / "toy"), {"world_path": tmp_path / "toy", "checkpoint": "off"}
    oracle = run_episode(world, make_agent("oracle", 1), 1, out_dir=tmp_path / "oracle", **kept)  # type: ignore[arg-type]
    baseline = run_episode(world, make_agent("baseline", 1), 1, out_dir=tmp_path / "baseline", **kept)  # type: ignore[arg-type]
    # 20 days on the 4-machine toy world: 62,254.19 against 45,420.33 (hold: 40,000 - 20 x 16 = 39,680)
    assert oracle.final_net_assets == pytest.approx(62254.19) and baseline.final_net_assets == pytest.approx(45420.33)
    meta = json.loads((tmp_path / "oracle" / "run.json").read_text())
    assert meta["agent"] == "oracle" and meta["privileged"] is True
    assert "privileged" not in json.loads((tmp_path / "baseline" / "run.json").read_text())
    assert (
        "privileged reference policy: it reads the hidden demand model"
        in (tmp_path / "oracle" / "report.md").read_text()
    )
    assert meta["agent_entry_point"] == "autovend.agents.oracle:OracleAgent"
    # it acts through the tools only: its calls replay, and the oracle run again makes exactly them
    result = verify_run(tmp_path / "oracle")
    assert result.ok, result.difference
    assert "trajectory.jsonl: each call is the one autovend.agents.oracle:OracleAgent makes" in result.checked


def test_a_resumed_oracle_run_ends_as_an_uninterrupted_one(world, tmp_path):
    class Stop(Exception):
        pass

    def stop_at(p):
        if p.day == 7:
            raise Stop

    with pytest.raises(Stop):
        run_episode(world, OracleAgent(seed=2), 2, out_dir=tmp_path / "a", checkpoint="sync", progress=stop_at)
    resumed = run_episode(world, OracleAgent(seed=2), 2, out_dir=tmp_path / "a", resume=True, evaluate=False)
    whole = run_episode(world, OracleAgent(seed=2), 2, out_dir=tmp_path / "b", checkpoint="off", evaluate=False)
    assert resumed.resumed_from == 7 and resumed.final_net_assets == whole.final_net_assets
    assert (tmp_path / "a" / "daily.csv").read_text() == (tmp_path / "b" / "daily.csv").read_text()


def test_the_oracle_reads_only_the_world_the_harness_hands_it_and_takes_no_config(world):
    # it reads the demand model the harness hands it (`reveal`), never the simulator's state, shocks or draws,
    # and never through a session (`sealed(session)`, the boundary's accessor, refuses agent code)
    text = "".join(p.read_text() for p in sorted(PACKAGE.glob("*.py")))
    assert "self._world = world" in text
    for forbidden in ("sealed(", "episode_of", "simulator_of", "Simulator", "shock_path", "demand_uniforms", ".xi"):
        assert forbidden not in text, forbidden
    assert "hidden_log" not in text
    with pytest.raises(ConfigError, match="the oracle takes no --agent-config"):
        make_agent("oracle", 1, "baseline-paper")


def test_the_oracle_is_handed_the_world_by_its_class_and_nothing_else(world, tmp_path):
    from autovend.agents.harness import HarnessSession, agent_step
    from autovend.agents.identity import grant_hidden
    from autovend.errors import AgentError

    class Copy(OracleAgent):  # the oracle's code, another class: not the oracle
        name = "oracle"

    session = HarnessSession(world, seed=1)
    try:
        for agent in (OracleAgent(seed=1), Copy(seed=1)):
            with pytest.raises(AgentError, match="only the harness hands it"):
                agent_step(agent, session, "start")  # nobody handed it the world
        copy = Copy(seed=1)
        grant_hidden(copy, world)  # the harness grants by the class's identity: a subclass gets nothing
        with pytest.raises(AgentError, match="only the harness hands it"):
            agent_step(copy, session, "start")
        oracle = OracleAgent(seed=1)
        grant_hidden(oracle, world)
        agent_step(oracle, session, "start")  # plans: no tool call, no error
    finally:
        session.close()
    with pytest.raises(AgentError, match="only the harness hands it"):  # the runner does not hand it the world
        run_episode(world, Copy(seed=1), 1, days=1, out_dir=tmp_path / "copy", checkpoint="off", evaluate=False)

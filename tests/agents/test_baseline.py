"""The rule-based baseline as a whole: its behaviour on short episodes (its rules: tests/agents/baseline/)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from autovend.agents.base import Agent, make_agent
from autovend.agents.baseline import BaselineAgent, starter_assortment
from autovend.agents.baseline.config import BaselineConfig
from autovend.env.boundary import episode_of, simulator_of
from autovend.session import ToolSession
from autovend.tools.trajectory import read_trajectory
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world

SMALL = BaselineConfig(starter_skus=12, n_skus=10)  # a toy world has 60 products, not 1,372


@pytest.fixture(scope="module")
def world() -> World:
    """4 machines (worksite, campus, residential, commercial), 60 products, 30 days from 2025-01-01."""
    return toy_world(4, 60, seed=0, economics=Economics(horizon_days=30))


def run(world: World, seed: int, days: int, path=None, config: BaselineConfig = SMALL) -> ToolSession:
    session = ToolSession(world, seed=seed, trajectory_path=path)
    agent = BaselineAgent(config, seed=seed)
    agent.start(session)
    for _ in range(days):
        agent.act_day(session)
    return session


def calls_without_times(path) -> list[dict[str, Any]]:
    """The trajectory without its wall times (the call's wall_ms and query_sql's elapsed_ms)."""
    out = []
    for rec in read_trajectory(path):
        rec.pop("wall_ms", None)
        if isinstance(rec.get("result"), dict):
            rec["result"].pop("elapsed_ms", None)
        out.append(rec)
    return out


# ------------------------------------------------------------------------------------------------ behaviour


def test_baseline_follows_the_agent_protocol():
    agent = make_agent("baseline", seed=3)
    assert isinstance(agent, Agent)
    assert isinstance(agent, BaselineAgent)
    assert agent.name == "baseline" and agent.seed == 3


def test_starter_assortment_spreads_machines_over_subcategories(world):
    session = ToolSession(world, seed=1)
    agent = BaselineAgent(SMALL, seed=1)
    agent.start(session)
    st = agent._memory.st
    chosen = starter_assortment(st, 12)
    assert (chosen.sum(axis=1) == 12).all()  # every machine gets 12 products
    n_sub = len(set(world.catalog["category_l2"]))
    for m in range(len(chosen)):  # every subcategory is tried at every machine
        assert len(set(st.l2[chosen[m]].tolist())) == n_sub
    # neighbouring machines try different products
    assert (chosen[0] & chosen[1]).sum() < 12
    session.close()


def test_a_toy_episode_is_clean(world, tmp_path):
    """No refused call, no rejected item, no expired unit sold, one end_day a day, profit made."""
    path = tmp_path / "t.jsonl"
    session = run(world, seed=1, days=30, path=path)
    assert session.done
    records = [r for r in read_trajectory(path) if r["kind"] == "call"]
    assert all(r["ok"] for r in records)
    rejected = Counter(x["code"] for r in records for x in (r["result"].get("rejected") or []))
    assert rejected == Counter()
    assert sum(r["tool"] == "end_day" for r in records) == 30
    summary = simulator_of(session).records.frame("daily_summary")
    assert summary["expired_fine"].sum() == 0
    assert summary["gross_profit"].sum() > 0
    visits = simulator_of(session).records.frame("shelf_events")
    assert set(visits["day"]) <= {d for d in range(1, 31) if simulator_of(session).day_info(d).is_workday}
    session.close()


def test_same_seed_same_run_on_a_toy_world(world, tmp_path):
    a = run(world, seed=7, days=30, path=tmp_path / "a.jsonl")
    b = run(world, seed=7, days=30, path=tmp_path / "b.jsonl")
    assert calls_without_times(tmp_path / "a.jsonl") == calls_without_times(tmp_path / "b.jsonl")
    assert simulator_of(a).balance() == simulator_of(b).balance()
    assert simulator_of(a).ledger().equals(simulator_of(b).ledger())
    c = run(world, seed=8, days=30)
    assert simulator_of(c).balance() != simulator_of(a).balance()  # the seed drives demand
    for s in (a, b, c):
        s.close()


def test_same_seed_same_run_on_cn20(tmp_path):
    from autovend.world.bundle import load_world

    cn20 = load_world("worlds/cn20")
    a = run(cn20, seed=1, days=10, path=tmp_path / "a.jsonl", config=BaselineConfig())
    b = run(cn20, seed=1, days=10, path=tmp_path / "b.jsonl", config=BaselineConfig())
    assert calls_without_times(tmp_path / "a.jsonl") == calls_without_times(tmp_path / "b.jsonl")
    assert simulator_of(a).balance() == simulator_of(b).balance()
    assert simulator_of(a).net_assets == simulator_of(b).net_assets
    for s in (a, b):
        s.close()


def test_state_dict_round_trip_continues_identically(world, tmp_path):
    """A copy restored from state_dict (with the session's checkpoint) makes exactly the same calls."""
    session = ToolSession(world, seed=2, trajectory_path=tmp_path / "full.jsonl")
    agent = BaselineAgent(SMALL, seed=2)
    agent.start(session)
    for _ in range(12):
        agent.act_day(session)
    episode_of(session).save(tmp_path / "s.ckpt")
    state = agent.state_dict()
    offset = (tmp_path / "full.jsonl").stat().st_size
    for _ in range(12):
        agent.act_day(session)
    rest = calls_without_times(tmp_path / "full.jsonl")
    (tmp_path / "copy.jsonl").write_bytes((tmp_path / "full.jsonl").read_bytes()[:offset])
    copy = ToolSession.load(tmp_path / "s.ckpt", world, trajectory_path=tmp_path / "copy.jsonl")
    restored = BaselineAgent(SMALL, seed=2)
    restored.load_state(state)
    for _ in range(12):
        restored.act_day(copy)
    assert calls_without_times(tmp_path / "copy.jsonl") == rest
    assert simulator_of(copy).balance() == simulator_of(session).balance()
    session.close()
    copy.close()


def test_load_state_refuses_another_config(world):
    session = ToolSession(world, seed=1)
    agent = BaselineAgent(SMALL, seed=1)
    agent.start(session)
    state = agent.state_dict()
    other = BaselineAgent(BaselineConfig(starter_skus=12, n_skus=9), seed=1)
    from autovend.errors import ConfigError

    with pytest.raises(ConfigError, match="same --agent-config"):
        other.load_state(state)
    session.close()


class _Public:
    """Lets through only the named attributes: a stand-in for what an agent may look at."""

    def __init__(self, target: Any, allowed: set[str]) -> None:
        self._target, self._allowed = target, allowed

    def __getattr__(self, name: str) -> Any:
        if name not in self._allowed:
            raise AssertionError(f"the baseline looked at {name!r}, which an agent cannot observe")
        return getattr(self._target, name)


def test_the_baseline_sees_only_tools_observation_and_public_rules(world):
    """Through a session exposing only call/observation/rules/day/done (no world, no simulator), it still runs."""
    session = ToolSession(world, seed=1)
    facade = _Public(session, {"call", "observation", "rules", "day", "done"})
    agent = BaselineAgent(SMALL, seed=1)
    agent.start(facade)  # type: ignore[arg-type]
    for _ in range(10):
        agent.act_day(facade)  # type: ignore[arg-type]
    assert session.day == 11
    session.close()


def test_state_dict_is_json_free_but_picklable(world):
    import pickle

    session = ToolSession(world, seed=1)
    agent = BaselineAgent(SMALL, seed=1)
    agent.start(session)
    agent.act_day(session)
    state = pickle.loads(pickle.dumps(agent.state_dict()))
    assert state["config"] == json.loads(SMALL.model_dump_json())
    assert state["state"]["day_done"] == 1
    session.close()


@pytest.mark.slow
def test_the_paper_baseline_serves_weekly_and_prices_each_machine_on_its_own(tmp_path):
    """The shipped baseline-paper config on cn20, 42 days: restock visits a week apart (the default baseline
    serves busy machines every 2-4 days), and after the first local trials the machines' price levels differ."""
    import numpy as np

    from autovend.agents.baseline.config import load_baseline_config
    from autovend.world.bundle import load_world

    cn20 = load_world("worlds/cn20")
    cfg = load_baseline_config("baseline-paper")
    session = run(cn20, seed=1, days=42, config=cfg)
    sim = simulator_of(session)
    events = sim.records.frame("shelf_events")
    visits = events[events["kind"] == "restock"][["device_id", "day"]].drop_duplicates()
    gaps = visits.sort_values(["device_id", "day"]).groupby("device_id")["day"].diff().dropna()
    assert len(gaps) >= 60 and gaps.min() >= 4 and gaps.mean() >= 6.5, gaps.describe()
    prices = sim.records.frame("price_changes")
    ref = cn20.catalog.set_index("sku_id")["ref_price"]
    last = prices[prices["day"] <= 42].sort_values("day").groupby(["device_id", "sku_id"]).tail(1)
    level = (last["new_price"] / ref.reindex(last["sku_id"]).to_numpy()).groupby(last["device_id"]).median()
    assert len(np.unique(np.round(level, 1))) >= 2, level
    session.close()

"""The rule-based baseline: its pure rules (numbers worked by hand) and its behaviour on short episodes."""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

import numpy as np
import pytest

from autovend.agents.base import Agent, make_agent
from autovend.agents.baseline import (
    BaselineAgent,
    crossover_arm,
    crossover_effect,
    dispersion,
    newsvendor_z,
    normal_loss,
    price_fen,
    round_lots,
    shelf_targets,
    spread_quota,
    starter_assortment,
    unsold_probability,
)
from autovend.agents.baseline.config import BaselineConfig
from autovend.tools.session import ToolSession
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


# ------------------------------------------------------------------------------------------------ pure rules


def test_newsvendor_z_from_the_critical_ratio():
    # cu = 3, co = 1: ratio 0.75, z = Phi^-1(0.75) = 0.6745
    # cu = 99, co = 1: ratio 0.99, z = 2.3263, clipped to z_max = 2
    # co = 0: ratio 1, z = z_max; cu <= 0: no safety stock
    z = newsvendor_z([3.0, 99.0, 2.0, -1.0, 0.0], [1.0, 1.0, 0.0, 1.0, 1.0], z_max=2.0)
    np.testing.assert_allclose(z, [0.674490, 2.0, 2.0, 0.0, 0.0], atol=1e-6)


def test_unsold_probability_and_normal_loss():
    # stock 10 against mean 9.5, sd 2: P(D < 10) = Phi((10 - 0.5 - 9.5) / 2) = Phi(0) = 0.5
    # stock 14.5: Phi((14.5 - 0.5 - 9.5) / 2) = Phi(2.25) = 0.98778
    np.testing.assert_allclose(unsold_probability([10.0, 14.5], 9.5, 4.0), [0.5, 0.987776], atol=1e-6)
    # E[(Z - 0)^+] = 1 / sqrt(2 pi) = 0.398942; at z = 1: pdf(1) - 1 * (1 - Phi(1)) = 0.241971 - 0.158655
    np.testing.assert_allclose(normal_loss([0.0, 1.0]), [0.398942, 0.083316], atol=1e-6)


def test_shelf_targets_share_spare_room_by_rate():
    # needs 2 and 2 -> facings 5 and 5 (10 of 20); spare 10 by rate 1:3 -> +2 and +7 (floors);
    # the last unit goes to the fastest product: [7, 13]
    S = shelf_targets([2.0, 2.0], [1.0, 3.0], [99, 99], room=20, facing=5)
    assert S.tolist() == [7, 13]
    # without fill the needs stay at the facings
    assert shelf_targets([2.0, 2.0], [1.0, 3.0], [99, 99], room=20, facing=5, fill=False).tolist() == [5, 5]


def test_shelf_targets_scale_the_part_above_the_facing():
    # needs 12, 4, 20 -> [12, 5, 20] = 37 > room 30. Above the facings: [7, 0, 15] = 22 into a budget of
    # 30 - 15 = 15: floor(7*15/22) = 4, 0, floor(15*15/22) = 10 -> [9, 5, 15] = 29; the last unit goes to
    # the fastest product (rate 3): [9, 5, 16]
    S = shelf_targets([12.0, 4.0, 20.0], [2.0, 1.0, 3.0], [99, 99, 99], room=30, facing=5)
    assert S.tolist() == [9, 5, 16]


def test_shelf_targets_when_even_the_facings_do_not_fit():
    # 3 products x facing 5 > room 12: the two fastest keep 5 each, the third gets the 2 units left
    S = shelf_targets([1.0, 1.0, 1.0], [0.5, 2.0, 1.0], [99, 99, 99], room=12, facing=5)
    assert S.tolist() == [2, 5, 5]


def test_shelf_targets_respect_the_spoilage_cap():
    # the first product may hold at most 6 units; the spare room goes to the second
    S = shelf_targets([1.0, 1.0], [1.0, 1.0], [6, 99], room=30, facing=5)
    assert S.tolist() == [6, 24]


def test_round_lots():
    # below two lots (12) quantities stay as they are (rounded up to whole units); from 12 on, whole lots
    assert round_lots([0.2, 5.0, 11.5, 12.0, 13.0, -3.0], 6).tolist() == [1, 5, 12, 12, 18, 0]
    assert round_lots([7.2], 1).tolist() == [8]


def test_price_fen_rounds_and_keeps_the_band():
    # 3.50 x 1.2 = 4.20; 3.33 x 1.1 = 3.663 -> 3.66; 3.50 x 2.5 -> capped at 2 x 3.50 = 7.00;
    # 3.50 x 0.45 -> raised to 0.5 x 3.50 = 1.75
    assert price_fen(120, [350], (0.5, 2.0)).tolist() == [420]
    assert price_fen(110, [333], (0.5, 2.0)).tolist() == [366]
    assert price_fen(250, [350], (0.5, 2.0)).tolist() == [700]
    assert price_fen(45, [350], (0.5, 2.0)).tolist() == [175]


def test_crossover_effect_is_the_mean_log_ratio():
    # machine 1: 70 under the incumbent, 80 under the candidate (7 days each): log(80/70) = 0.133531
    # machine 2: 140 and 120: log(120/140) = -0.154151; mean -0.010310
    # machine 3 has no candidate day and is left out
    effect = crossover_effect([[70.0, 80.0], [140.0, 120.0], [50.0, 0.0]], [[7, 7], [7, 7], [7, 0]])
    assert effect == pytest.approx((math.log(80 / 70) + math.log(120 / 140)) / 2)
    assert effect == pytest.approx(-0.010310, abs=1e-6)
    assert crossover_effect([[0.0, 5.0]], [[7, 7]]) is None


def test_crossover_arm_swaps_halves_at_mid_trial():
    # a 14-day trial from day 10: days 10-16 group 0 on the incumbent, group 1 on the candidate; then swapped
    assert crossover_arm([0, 1, 0], 10, 10, 14).tolist() == [0, 1, 0]
    assert crossover_arm([0, 1, 0], 16, 10, 14).tolist() == [0, 1, 0]
    assert crossover_arm([0, 1, 0], 17, 10, 14).tolist() == [1, 0, 1]


def test_dispersion_by_moments():
    # [5, 15] x 4: mean 10, sample variance 8 * 25 / 7 = 28.5714; r = 100 / 18.5714 = 5.3846
    assert dispersion([5, 15] * 4, default=3.0) == pytest.approx(100 / (200 / 7 - 10))
    assert dispersion([5, 15] * 3, default=3.0) == 3.0  # fewer than 7 days: the default
    assert dispersion([10] * 8, default=3.0) == 50.0  # no extra variance: practically Poisson


def test_spread_quota_by_square_root_of_size():
    # sizes 64, 16, 4 -> weights 8, 4, 2 (sum 14); 10 slots: 5.714, 2.857, 1.429 -> floors 5, 2, 1 (8);
    # largest remainders .857 then .714 get the 2 slots left: [6, 3, 1]
    assert spread_quota([64, 16, 4], 10).tolist() == [6, 3, 1]
    # never more than a group holds
    assert spread_quota([1, 100], 10).tolist() == [1, 9]


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
    summary = session.sim.records.frame("daily_summary")
    assert summary["expired_fine"].sum() == 0
    assert summary["gross_profit"].sum() > 0
    visits = session.sim.records.frame("shelf_events")
    assert set(visits["day"]) <= {d for d in range(1, 31) if session.sim.day_info(d).is_workday}
    session.close()


def test_same_seed_same_run_on_a_toy_world(world, tmp_path):
    a = run(world, seed=7, days=30, path=tmp_path / "a.jsonl")
    b = run(world, seed=7, days=30, path=tmp_path / "b.jsonl")
    assert calls_without_times(tmp_path / "a.jsonl") == calls_without_times(tmp_path / "b.jsonl")
    assert a.sim.balance() == b.sim.balance()
    assert a.sim.ledger().equals(b.sim.ledger())
    c = run(world, seed=8, days=30)
    assert c.sim.balance() != a.sim.balance()  # the seed drives demand
    for s in (a, b, c):
        s.close()


def test_same_seed_same_run_on_cn20(tmp_path):
    from autovend.world.bundle import load_world

    cn20 = load_world("worlds/cn20")
    a = run(cn20, seed=1, days=10, path=tmp_path / "a.jsonl", config=BaselineConfig())
    b = run(cn20, seed=1, days=10, path=tmp_path / "b.jsonl", config=BaselineConfig())
    assert calls_without_times(tmp_path / "a.jsonl") == calls_without_times(tmp_path / "b.jsonl")
    assert a.sim.balance() == b.sim.balance()
    assert a.sim.net_assets == b.sim.net_assets
    for s in (a, b):
        s.close()


def test_state_dict_round_trip_continues_identically(world, tmp_path):
    """A copy restored from state_dict (with the session's checkpoint) makes exactly the same calls."""
    session = ToolSession(world, seed=2, trajectory_path=tmp_path / "full.jsonl")
    agent = BaselineAgent(SMALL, seed=2)
    agent.start(session)
    for _ in range(12):
        agent.act_day(session)
    session.save(tmp_path / "s.ckpt")
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
    assert copy.sim.balance() == session.sim.balance()
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
    """Through a session exposing only call/observation/day/done and the world's public rules, it still runs."""
    session = ToolSession(world, seed=1)
    public_world = _Public(world, {"economics", "n_machines", "n_products", "timezone", "country"})
    facade = _Public(session, {"call", "observation", "day", "done"})
    facade.__dict__["world"] = public_world
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

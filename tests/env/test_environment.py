"""VendingEnv: reset, tool calls, end_day with the day's reward, the days limit, restore."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from autovend.env import DayStep, Observation, VendingEnv
from autovend.env.boundary import episode_of, simulator_of
from autovend.errors import BundleError
from autovend.session import ToolSession
from autovend.sim.money import from_fen
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world

CN20 = Path(__file__).resolve().parents[2] / "worlds" / "cn20"
FEE = 3 * 4.0  # the fixed daily fee of 3 machines
# toy calendar from 2025-01-01: day 1 New Year (holiday), days 2-3 workdays, 4-5 weekend


@pytest.fixture(scope="module")
def world() -> World:
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=6))


@pytest.fixture
def env(world):
    e = VendingEnv(world)
    yield e
    e.close()


def test_reset_returns_day_one_report(env):
    obs = env.reset(seed=1)
    assert isinstance(obs, Observation)
    assert (obs.day, obs.horizon_days, obs.date, obs.weekday) == (1, 6, dt.date(2025, 1, 1), "Wednesday")
    assert not obs.is_workday and not obs.done  # New Year
    assert obs.net_assets == obs.cash == 40_000 - FEE  # day 1's fee is charged at its start
    assert list(obs.report) == ["balance", "pnl", "devices", "warehouse", "in_transit", "calendar"]
    assert obs.prompt.startswith("Day 1 of 6 — Wednesday, 2025-01-01.")
    assert obs.prompt == env.daily_prompt()
    assert obs.to_json().isascii()


def test_rewards_are_the_daily_change_in_net_assets(env):
    env.reset(seed=1)
    assert env.call("place_order", {"items": [{"sku_id": "SKU0001", "qty": 30}]}).ok
    steps: list[DayStep] = []
    while not env.done:
        if env.observation().is_workday and env.call("get_warehouse", {}).content["totals"]["units"]:
            restock = [{"device_id": "CN_WORKSITE_01", "sku_id": "SKU0001", "qty": 30}]
            assert env.call("restock", {"items": restock}).content["accepted"]
        steps.append(env.end_day())
    reports = simulator_of(env).reports
    close_fen = [40_000 * 100] + [r.balance.net_assets_fen for r in reports]
    assert [s.reward for s in steps] == [from_fen(b - a) for a, b in zip(close_fen, close_fen[1:], strict=False)]
    assert steps[0].reward == -FEE  # day 1: only the fee
    assert sum(s.info["settled"]["units_sold"] for s in steps) > 0  # rewards that include sales
    assert round(sum(s.reward for s in steps), 2) == round(reports[-1].balance.net_assets - 40_000, 2)
    assert [s.terminated for s in steps] == [False] * 5 + [True]
    assert not any(s.truncated for s in steps)
    last = steps[-1].observation
    assert last.done and last.day == 6 and last.prompt.startswith("The episode is over: day 6")
    # after the end: end_day is refused, with no reward
    again = env.end_day()
    assert again.reward == 0.0 and again.terminated and "episode is over" in again.info["error"]


def test_days_limit_truncates(world):
    with VendingEnv(world, days=2) as env:
        env.reset(seed=1)
        first, second = env.end_day(), env.end_day()
        assert (first.truncated, second.truncated, second.terminated) == (False, True, False)
        assert env.done and env.day == 3
        refused = env.call("get_warehouse", {})
        assert not refused.ok and "set to 2 days" in refused.error and refused.content == {"error": refused.error}
        assert env.reset(seed=1).day == 1 and not env.done  # a new episode starts over
    with pytest.raises(ValueError, match="between 1 and the world's horizon 6, got 7"):
        VendingEnv(world, days=7)


def test_calls_before_reset_are_a_programming_error(world):
    env = VendingEnv(world)
    assert env.rules().horizon_days == 6 and len(env.tools()) == 18  # known before any episode
    with pytest.raises(RuntimeError, match=r"call reset\(seed\) first"):
        env.call("get_warehouse", {})


def test_reset_starts_afresh_and_is_deterministic(env, tmp_path):
    first = env.reset(seed=4, notebook="plan", trajectory_path=tmp_path / "a.jsonl")
    env.call("write_memory", {"text": "changed"})
    env.end_day()
    assert env.counters["seq"] == 2 and env.notebook == "changed"
    again = env.reset(seed=4)
    assert again == first and again.report is not first.report
    assert env.counters == {"seq": 0, "errors": 0, "by_tool": {}} and env.notebook == ""
    assert env.trajectory_path is None and len((tmp_path / "a.jsonl").read_text().splitlines()) == 3


def test_restore_continues_the_episode(world, tmp_path):
    a = VendingEnv(world)
    a.reset(seed=5)
    a.call("place_order", {"items": [{"sku_id": "SKU0003", "qty": 8}]})
    a.end_day()
    path = episode_of(a).save(tmp_path / "a.ckpt")
    b = VendingEnv.restore(path, world)
    assert b.day == 2 and b.counters == a.counters
    assert [a.end_day().reward for _ in range(3)] == [b.end_day().reward for _ in range(3)]
    assert simulator_of(a).balance() == simulator_of(b).balance()


def test_a_bundle_path_is_a_world():
    env = VendingEnv(str(CN20), days=1)
    rules = env.rules()
    assert (rules.n_machines, rules.horizon_days, rules.daily_fee, rules.price_band) == (20, 180, 80.0, (0.5, 2.0))
    obs = env.reset(seed=1)
    assert obs.net_assets == 40_000 - 80
    env.close()


def test_a_shipped_world_is_named_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no worlds/ here
    env = VendingEnv("cn20", days=1)
    assert env.rules().n_machines == 20 and env.reset(seed=1).net_assets == 40_000 - 80
    env.close()
    with pytest.raises(BundleError, match=r"world 'cn21' does not exist.*\(names: .*cn20"):
        VendingEnv("cn21")


def test_the_session_is_the_same_episode_as_its_env(world):
    session = ToolSession(world, seed=2)
    session.call("place_order", {"items": [{"sku_id": "SKU0001", "qty": 4}]})
    assert session.observation() == session._env.observation().report
    assert session.daily_prompt() == session._env.daily_prompt()
    assert episode_of(session) is episode_of(session._env)
    session.close()

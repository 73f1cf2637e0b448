"""autovend.vector: make_vec's native mode matches gymnasium's SyncVectorEnv step for step; batched demand; async."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from gymnasium.vector import SyncVectorEnv

import autovend.gym  # noqa: F401 - registers AutoVend-v0 and its vector entry point
from autovend.agents.knobs import IDLE, KnobAgent, Knobs, _one, run_episodes
from autovend.env.boundary import episode_of
from autovend.gym import AutoVendEnv
from autovend.vector import AutoVendVectorEnv
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def world() -> World:
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=6))


@pytest.fixture(scope="module")
def other_world() -> World:
    return toy_world(4, 15, seed=1, economics=Economics(horizon_days=6))


def _sync(worlds: list[World], days: int | None = None) -> SyncVectorEnv:
    return SyncVectorEnv([lambda w=w: AutoVendEnv(w, days=days) for w in worlds])


def check_vector_envs_match(a, b, num_steps: int, seed: int) -> None:
    """gymnasium's `check_environments_match` for vector envs: reset and random actions give equal outputs."""
    assert data_equivalence(a.reset(seed=seed), b.reset(seed=seed))
    a.action_space.seed(seed)
    for _ in range(num_steps):
        action = a.action_space.sample()
        out_a, out_b = a.step(action), b.step(action)
        assert data_equivalence(out_a, out_b)
        assert out_a[0] in a.observation_space


def _scripted(envs, n_steps: int, knobs: list[Knobs], seeds: list[int]) -> list:
    """Drive any vector env with KnobAgents for n_steps; every step's outputs."""
    agents = [KnobAgent(k) for k in knobs]
    obs, infos = envs.reset(seed=seeds)
    out = [(obs, infos)]
    started = [True] * envs.num_envs
    actions = [agents[i].start(_one(obs, i)) for i in range(envs.num_envs)]
    for _ in range(n_steps):
        step = envs.step(tuple(actions))
        out.append(step)
        obs, _, terminated, truncated, _ = step
        for i in range(envs.num_envs):
            if not started[i]:  # the autoreset step: a new episode's report
                actions[i] = agents[i].start(_one(obs, i))
                started[i] = True
            elif terminated[i] or truncated[i]:
                actions[i], started[i] = IDLE, False
            else:
                actions[i] = agents[i].act(_one(obs, i))
    return out


def test_native_vector_env_matches_sync_on_random_and_scripted_actions(world, other_world):
    worlds = [world, other_world, world]
    native = AutoVendVectorEnv(3, world=worlds)
    sync = _sync(worlds)
    assert native.single_observation_space == sync.single_observation_space
    assert native.observation_space == sync.observation_space and native.action_space == sync.action_space
    assert native.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"]
    check_vector_envs_match(native, sync, num_steps=20, seed=3)  # random (malformed) texts
    knobs = [Knobs(1.6, 4, 5, 6.0, 2), Knobs(), Knobs(2.0, 3, 4, 3.0, 1)]
    a = _scripted(native, 160, knobs, [5, 6, 7])  # past the 6-day horizon: autoresets included
    b = _scripted(sync, 160, knobs, [5, 6, 7])
    for x, y in zip(a, b, strict=True):
        assert data_equivalence(x, y)
        assert x[0] in native.observation_space
    dones = sum(int(np.sum(s[2])) for s in a[1:])
    assert dones >= 3  # every sub-environment finished an episode and went on in the next
    native.close()
    sync.close()


def test_batched_demand_is_drawn_once_and_gives_the_days_as_alone(world):
    envs = AutoVendVectorEnv(4, world=world)
    alone = AutoVendVectorEnv(1, world=world)
    knobs = [Knobs(1.3, 4, 6, 5.0, 1)] * 4
    final = run_episodes(envs, knobs, [1, 2, 3, 4])
    each = [run_episodes(alone, knobs[:1], [s])[0] for s in (1, 2, 3, 4)]
    assert final.tolist() == each


def test_a_kept_draw_is_used_only_while_nothing_changes(world):
    order = json.dumps({"tool": "place_order", "args": {"items": [{"sku_id": "SKU0001", "qty": 30}]}})
    envs = []
    for _ in range(3):
        env = AutoVendEnv(world)
        env.reset(seed=2)
        env.step(order)
        for _ in range(2):
            env.step('{"end_day": true}')
        envs.append(env)
    sims = [episode_of(e._env).sim for e in envs]
    restock = {"items": [{"device_id": sims[0].device_ids[0], "sku_id": "SKU0001", "qty": 5}]}
    sims[0].draw_demand()  # drawn on the empty shelves, then the shelves change: drawn again at end_day
    for e in envs:
        e.step(json.dumps({"tool": "restock", "args": restock}))
    sims[1].draw_demand()  # drawn on the shelves as they stay: used by end_day
    rewards = [e.step('{"end_day": true}')[1] for e in envs]
    assert rewards[0] == rewards[1] == rewards[2]
    assert sims[0].balance() == sims[1].balance() == sims[2].balance()
    assert sims[0].records.serialize() == sims[1].records.serialize() == sims[2].records.serialize()
    assert sims[0].hidden.frame("demand").equals(sims[2].hidden.frame("demand"))


def test_make_vec_native_and_async_on_cn20(monkeypatch):
    monkeypatch.chdir(ROOT)
    native = gymnasium.make_vec("AutoVend-v0", num_envs=2, world="worlds/cn20", days=2)
    assert isinstance(native, AutoVendVectorEnv)
    asynced = gymnasium.make_vec(
        "AutoVend-v0",
        num_envs=2,
        vectorization_mode="async",
        vector_kwargs={"shared_memory": False},
        world="worlds/cn20",
        days=2,
    )
    try:
        check_vector_envs_match(native, asynced, num_steps=3, seed=1)
        a = [native.reset(seed=4), *(native.step(('{"end_day": true}',) * 2) for _ in range(3))]
        b = [asynced.reset(seed=4), *(asynced.step(('{"end_day": true}',) * 2) for _ in range(3))]
        assert data_equivalence(a, b)
        assert a[2][3].tolist() == [True, True]  # truncated after days=2, reset at the next step
    finally:
        native.close()
        asynced.close()


def test_worlds_of_a_vector_env_must_share_the_horizon(world):
    with pytest.raises(ValueError, match="share their horizon"):
        AutoVendVectorEnv(2, world=[world, toy_world(3, 12, seed=0, economics=Economics(horizon_days=9))])
    with pytest.raises(ValueError, match="give one or 3"):
        AutoVendVectorEnv(3, world=[world, world])

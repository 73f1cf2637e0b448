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
from autovend.env.boundary import episode_of, simulator_of
from autovend.gym import AutoVendEnv, parse_action
from autovend.session import ToolSession
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


def _play(envs, knobs: Knobs, seed) -> tuple[list, list]:
    """Drive a vector env with one KnobAgent per sub-environment from reset(seed=seed) to the end of every episode.

    Returns each sub-environment's outputs, step by step (observation text, reward, terminated, truncated),
    and its simulator as the episode ended (the next step autoresets it).
    """
    n = envs.num_envs
    agents = [KnobAgent(knobs) for _ in range(n)]
    obs, _ = envs.reset(seed=seed)
    outs: list[list] = [[_one(obs, i)["text"]] for i in range(n)]
    actions = [agents[i].start(_one(obs, i)) for i in range(n)]
    sims: list = [None] * n
    while any(s is None for s in sims):
        obs, rewards, terminated, truncated, _ = envs.step(tuple(actions))
        for i in range(n):
            if sims[i] is not None:
                actions[i] = IDLE
                continue
            outs[i].append((_one(obs, i)["text"], float(rewards[i]), bool(terminated[i]), bool(truncated[i])))
            if terminated[i] or truncated[i]:
                sims[i], actions[i] = episode_of(envs.envs[i]._env).sim, IDLE
            else:
                actions[i] = agents[i].act(_one(obs, i))
    return outs, sims


def _alone(world: World, knobs: Knobs, seed: int) -> tuple[list, object]:
    """The same KnobAgent on one gym env of its own, reset with `seed`: its outputs and simulator."""
    env = AutoVendEnv(world)
    agent = KnobAgent(knobs)
    obs, _ = env.reset(seed=seed)
    out: list = [obs["text"]]
    action = agent.start(obs)
    while True:
        obs, reward, terminated, truncated, _ = env.step(action)
        out.append((obs["text"], float(reward), bool(terminated), bool(truncated)))
        if terminated or truncated:
            return out, episode_of(env._env).sim
        action = agent.act(obs)


def _units_sold(sim) -> int:
    return int(sim.records.frame("SELECT COALESCE(SUM(qty), 0) AS n FROM orders")["n"].iloc[0])


@pytest.mark.parametrize("seed", [5, np.int64(5)], ids=["int", "numpy-int"])
def test_an_integer_seed_gives_env_i_the_episode_of_seed_plus_i_on_stocked_shelves(world, seed):
    """reset(seed=s) plays sub-environment i exactly as a gym env reset with s + i, number for number.

    The episodes stock the shelves and sell (a seed changes the demand, so only days with sales can tell two
    seeds apart; the planted bug "the integer seed shifted by one" passed tests that saw empty shelves only).
    """
    knobs = Knobs(1.3, 4, 6, 5.0, 1)
    envs = AutoVendVectorEnv(2, world=world)
    outs, sims = _play(envs, knobs, seed)
    for i in range(2):
        alone, sim = _alone(world, knobs, 5 + i)
        assert outs[i] == alone  # every observation text, reward and flag
        assert sim.balance() == sims[i].balance()
        assert sim.records.serialize() == sims[i].records.serialize()
        assert _units_sold(sims[i]) > 0  # the shelves were stocked and sold from
        assert sims[i].seed == 5 + i
    # the comparison can tell the seeds apart: the next seed plays another episode
    shifted, _ = _alone(world, knobs, 6)
    assert shifted != outs[0]
    assert [r for _, r, *_ in shifted[1:]] != [r for _, r, *_ in outs[0][1:]]
    envs.close()


def test_a_list_of_seeds_and_tool_session_agree_on_stocked_shelves(world):
    """The vector env with seeds [s0, s1] and a ToolSession with seed s1 fed the same calls end the same."""
    knobs = Knobs(1.6, 4, 5, 6.0, 2)
    envs = AutoVendVectorEnv(2, world=world)
    agent = KnobAgent(knobs)
    outs, sims = _play(envs, knobs, [9, 4])
    session = ToolSession(world, seed=4)
    obs = {"kind": "report", "day": 1, "text": outs[1][0]}
    action = agent.start(obs)
    for text, *_ in outs[1][1:]:
        parsed = parse_action(action)
        assert not isinstance(parsed, str)
        tool, args = parsed
        result = session.call(tool, args)
        if tool != "end_day":  # the result the vector env showed is the session's, character for character
            assert json.loads(text)["content"] == json.loads(result.to_json())
        action = agent.act({"kind": "result", "day": session.day, "text": text})
    assert simulator_of(session).balance() == sims[1].balance()
    assert simulator_of(session).records.serialize() == sims[1].records.serialize()
    assert _units_sold(sims[1]) > 0
    session.close()
    envs.close()


@pytest.mark.parametrize(
    ("seed", "message"),
    [
        pytest.param(1.5, r"seed must be a whole number >= 0, got 1.5 \(a float\)", id="float"),
        pytest.param(True, r"got True \(a boolean\)", id="true"),
        pytest.param(np.bool_(True), r"\(a boolean\)", id="numpy-bool"),
        pytest.param([True, 2], r"seed\[0\] must be a whole number >= 0, got True \(a boolean\)", id="true-in-list"),
        pytest.param([1, 2.0], r"seed\[1\] must be a whole number >= 0, got 2.0 \(a float\)", id="float-in-list"),
        pytest.param("12", r"got '12' \(a str\)", id="text"),
        pytest.param({"a": 1}, "seed must be None, a whole number >= 0 or a list of 2, got a dict", id="dict"),
        pytest.param([1, 2, 3], "seed lists 3 seeds for 2 environments", id="too-many"),
    ],
)
def test_a_seed_that_is_no_whole_number_is_refused_before_any_env_resets(world, seed, message):
    envs = AutoVendVectorEnv(2, world=world)
    envs.reset(seed=[7, 8])
    envs.step(('{"end_day": true}',) * 2)
    with pytest.raises(ValueError, match=message):
        envs.reset(seed=seed)
    assert [e._env.day for e in envs.envs] == [2, 2]  # nothing was reset
    envs.close()


def test_numpy_integer_seeds_are_their_ints(world):
    a, b = AutoVendVectorEnv(2, world=world), AutoVendVectorEnv(2, world=world)
    assert data_equivalence(a.reset(seed=np.int64(3)), b.reset(seed=3))
    assert data_equivalence(a.reset(seed=np.array([3, 9])), b.reset(seed=[3, 9]))
    assert [episode_of(e._env).sim.seed for e in a.envs] == [3, 9]


@pytest.mark.parametrize("num_envs", [True, 0, 2.0, "2"], ids=["true", "zero", "float", "text"])
def test_num_envs_must_be_a_whole_number(world, num_envs):
    with pytest.raises(ValueError, match="num_envs must be a whole number >= 1"):
        gymnasium.make_vec("AutoVend-v0", num_envs=num_envs, world=world)


def test_num_envs_may_be_a_numpy_integer(world):
    envs = gymnasium.make_vec("AutoVend-v0", num_envs=np.int64(2), world=world)
    assert envs.num_envs == 2 and type(envs.num_envs) is int
    envs.close()


def test_end_day_with_arguments_is_refused_in_every_sub_environment(world):
    """As in ToolSession: the day goes on, the refusal is the session's, no demand is drawn for it."""
    envs = AutoVendVectorEnv(2, world=world)
    envs.reset(seed=[1, 2])
    obs, rewards, _, _, infos = envs.step(('{"tool": "end_day", "args": {"foo": 1}}',) * 2)
    session = ToolSession(world, seed=1)
    refused = session.call("end_day", {"foo": 1})
    assert obs["day"].tolist() == [1, 1] and rewards.tolist() == [0.0, 0.0]
    assert infos["ok"].tolist() == [False, False] and list(infos["error"]) == [refused.error] * 2
    assert json.loads(obs["text"][0])["content"] == json.loads(refused.to_json())
    obs, *_ = envs.step(('{"end_day": true}',) * 2)
    assert obs["day"].tolist() == [2, 2]
    envs.close()
    session.close()

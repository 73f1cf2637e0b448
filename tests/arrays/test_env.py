"""AutoVend-Array-v0: gymnasium's checks, the native vector env against SyncVectorEnv, and what is refused."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence
from gymnasium.vector import SyncVectorEnv

from autovend.arrays.actions import CODES
from autovend.arrays.env import ArrayVendEnv, ArrayVendVectorEnv, explain_refusals, hold_action
from autovend.sim.items import MAX_ITEM_QTY
from autovend.world.model import Economics
from autovend.world.toy import toy_world
from tests.test_vector import check_vector_envs_match

CODE = {name: i for i, name in enumerate(CODES)}


@pytest.fixture(scope="module")
def world():
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=8))  # days 1-2 off, 3-4 working


def test_gymnasium_env_checker_passes(world):
    env = ArrayVendEnv(world, slots=5)
    check_env(env)
    obs, _ = env.reset(seed=1)
    for key, value in obs.items():  # arrays of the space's own dtype, scalars as 0-d arrays
        space = env.observation_space[key]
        assert isinstance(value, np.ndarray) and value.dtype == space.dtype and value in space, key
    env = gymnasium.make("AutoVend-Array-v0", world=world, slots=5)
    with pytest.warns(UserWarning):
        check_env(env)  # through gymnasium.make's wrappers too: it only warns that they are there


def test_native_vector_env_matches_sync_vector_env(world):
    native = ArrayVendVectorEnv(3, world=world, slots=5)
    sync = SyncVectorEnv([lambda: ArrayVendEnv(world, slots=5) for _ in range(3)])
    assert native.single_observation_space == sync.single_observation_space
    assert native.observation_space == sync.observation_space and native.action_space == sync.action_space
    check_vector_envs_match(native, sync, num_steps=20, seed=3)  # random actions, past the 8-day horizon
    obs_a, _ = native.reset(seed=[7, 8, 9])
    obs_b, _ = sync.reset(seed=[7, 8, 9])
    for _ in range(10):  # held actions: the same days, autoreset included
        a, b = native.step(hold_action(obs_a)), sync.step(hold_action(obs_b))
        assert data_equivalence(a, b)
        obs_a, obs_b = a[0], b[0]
    assert gymnasium.make_vec("AutoVend-Array-v0", num_envs=2, world=world, slots=5).__class__ is ArrayVendVectorEnv


def test_rewards_add_up_and_the_run_ends(world):
    env = ArrayVendEnv(world, slots=5)
    obs, info = env.reset(seed=4)
    start = env.facts.start_cash_fen / 100
    total, flags = 0.0, []
    action = hold_action(obs)
    action["order"] = np.full(12, 5)
    while True:
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        flags.append((terminated, truncated))
        action = hold_action(obs)
        if terminated:
            break
    assert len(flags) == 8 and flags[-1] == (True, False) and not any(t for t, _ in flags[:-1])
    assert total == pytest.approx(info["net_assets"] - start, abs=1e-6)
    with pytest.raises(RuntimeError, match="over"):
        env.step(action)
    short = ArrayVendEnv(world, slots=5, days=3)
    obs, _ = short.reset(seed=4)
    steps = [short.step(hold_action(obs))[2:4] for _ in range(3)]
    assert steps == [(False, False), (False, False), (False, True)]
    with pytest.raises(ValueError, match="no reset options"):
        short.reset(options={"x": 1})


def _stock(env: ArrayVendEnv, units: list[int]) -> dict[str, np.ndarray]:
    """Order `units` of products 0-2 on day 1 and hold until a working day with them in the warehouse."""
    obs, _ = env.reset(seed=1)
    action = hold_action(obs)
    action["order"][:3] = units
    obs, *_ = env.step(action)
    while not (obs["workday"] and (obs["warehouse_units"][:3] > 0).all()):
        obs, *_ = env.step(hold_action(obs))
    return obs


def test_what_breaks_a_rule_is_refused_with_its_code(world):
    env = ArrayVendEnv(world, slots=3)
    obs, _ = env.reset(seed=1)
    action = hold_action(obs)
    action["visit"][0] = 1  # day 1 is a day off
    action["slot_product"][0, 0] = 0
    action["slot_target"][0, 0] = 5
    action["order"][1] = MAX_ITEM_QTY + 1
    action["order"][2] = 4
    obs, _, _, _, info = env.step(action)
    assert info["visit_refused"][0] == CODE["not_workday"] and info["slot_refused"][0, 0] == CODE["not_workday"]
    assert info["order_refused"][1] == CODE["qty_too_large"] and info["order_refused"][2] == 0
    assert obs["in_transit"][1] == 0 and obs["in_transit"][2] == 4 and (obs["slot_product"] == -1).all()
    assert info["refused"] == 3
    text = explain_refusals(info, env.facts)
    assert any("not_workday" in line and "working day" in line for line in text)

    obs = _stock(env, [30, 30, 250])
    have = int(obs["warehouse_units"][0])
    action = hold_action(obs)
    action["visit"][:] = 1
    action["slot_product"][0] = [0, 1, 0]  # product 0 twice at machine 0
    action["slot_target"][0] = [have + 5, 3, 2]  # more than the warehouse holds
    action["slot_product"][1, 0], action["slot_target"][1, 0] = 99, 4  # no such product
    action["slot_product"][2, 0], action["slot_target"][2, 0] = 2, 500  # more than the machine holds
    action["slot_remove"][2, 1] = 3  # nothing there to take off
    action["discard"][1] = 10_000
    obs, _, _, _, info = env.step(action)
    codes = info["slot_refused"]
    assert codes[0, 0] == CODE["insufficient_stock"] and codes[0, 2] == CODE["duplicate_product"]
    assert codes[1, 0] == CODE["unknown_sku"] and codes[2, 0] == CODE["capacity_exceeded"]
    assert codes[2, 1] == CODE["insufficient_shelf_stock"] and info["discard_refused"][1] == CODE["insufficient_stock"]
    assert obs["slot_units"][0, 2] == 0 and obs["slot_product"][0, 2] == -1  # the duplicate stayed as it was
    assert obs["slot_units"][2, 0] + obs["slot_sold"][2, 0] == 200  # cut to the capacity
    assert obs["warehouse_units"][1] == 0  # the discard was cut to what the warehouse held


def test_prices_out_of_band_and_changes_without_a_visit_are_refused(world):
    env = ArrayVendEnv(world, slots=3)
    obs = _stock(env, [30, 30, 30])
    action = hold_action(obs)
    action["visit"][0] = 1
    action["slot_product"][0, :2] = [0, 1]
    action["slot_target"][0, :2] = [6, 6]
    action["slot_price"][0, :2] = [2.5, 1.2]  # above the band; within it
    action["slot_product"][1, 0], action["slot_target"][1, 0] = 2, 4  # machine 1 is not visited
    obs, _, _, _, info = env.step(action)
    assert info["price_refused"][0, 0] == CODE["price_out_of_band"] and info["price_refused"][0, 1] == 0
    assert obs["slot_price"][0, 0] == 1.0 and obs["slot_price"][0, 1] == pytest.approx(1.2, abs=0.01)
    assert info["slot_refused"][1, 0] == CODE["no_visit"] and obs["slot_product"][1, 0] == -1
    assert info["visits"] == 1


def test_holding_changes_nothing_but_the_fees(world):
    env = ArrayVendEnv(world, slots=4)
    obs, _ = env.reset(seed=2)
    fee = env.facts.daily_fee_fen / 100
    for _ in range(5):
        obs, reward, _, _, info = env.step(hold_action(obs))
        assert reward == pytest.approx(-fee) and info["refused"] == 0 and info["visits"] == 0


def test_nothing_the_array_env_hands_out_reaches_the_truth(world):
    """The env, its facts, observations and infos hold no simulator, world or demand parameter (as the tool doors)."""
    from autovend.arrays.core import ArraySim
    from autovend.arrays.env import array_sim_of
    from autovend.arrays.facts import ArrayFacts
    from tests.env.walker import find_privileged

    single = ArrayVendEnv(world, slots=4, record=True)
    vector = ArrayVendVectorEnv(2, world=world, slots=4, record=True)
    received: list[object] = [single, vector, single.facts, vector.facts]
    obs, info = single.reset(seed=1)
    vobs, vinfo = vector.reset(seed=1)
    received += [obs, info, vobs, vinfo]
    for _ in range(3):
        received += list(single.step(hold_action(obs)))
        received += list(vector.step(hold_action(vobs)))
    received += [single.run_calls(), vector.run_calls(1)]
    assert find_privileged(received, world) == []  # World, demand model, b and U arrays: none reachable
    assert not any(isinstance(v, (ArraySim, ArrayFacts)) for env in (single, vector) for v in vars(env).values())
    assert isinstance(array_sim_of(single), ArraySim) and array_sim_of(vector).n_runs == 2  # the harness gets in
    with pytest.raises(TypeError, match="not an AutoVend-Array-v0 env"):
        array_sim_of(object())


def test_array_sim_of_is_refused_to_agent_code(world):
    """The harness's way in is refused as `simulator_of` is: inside agent code, and for envs agent code made."""
    import threading

    from autovend.arrays.env import array_sim_of
    from autovend.env.boundary import agent_code
    from autovend.errors import PrivilegeError
    from autovend.session import ToolSession

    harness_env = ArrayVendEnv(world, slots=4)
    session = ToolSession(world, seed=1)  # the agent's session: agent code runs on it
    try:
        with agent_code(session):
            with pytest.raises(PrivilegeError, match=r"array_sim_of\(\.\.\.\) was refused while the agent's code runs"):
                array_sim_of(harness_env)
            own = ArrayVendEnv(world, slots=4)  # envs the agent makes itself: it may play them
            own_vector = ArrayVendVectorEnv(2, world=world, slots=4)
            obs, _ = own.reset(seed=1)
            own.step(hold_action(obs))
            vobs, _ = own_vector.reset(seed=1)
            own_vector.step(hold_action(vobs))
            for env in (own, own_vector):
                with pytest.raises(PrivilegeError):
                    array_sim_of(env)
        assert array_sim_of(harness_env).n_runs == 1  # back in the harness: allowed again
        for env in (own, own_vector):  # but an env agent code made never hands out its simulator
            with pytest.raises(PrivilegeError, match="for an array env the agent's code made"):
                array_sim_of(env)
        outcome: list[str] = []

        def other() -> None:
            try:
                array_sim_of(own)
                outcome.append("read")
            except PrivilegeError:
                outcome.append("refused")

        thread = threading.Thread(target=other)  # a thread of the agent's own, polling later
        thread.start()
        thread.join()
        assert outcome == ["refused"]
    finally:
        session.close()


def test_malformed_values_are_refused_and_malformed_actions_raise(world):
    env = ArrayVendEnv(world, slots=3)
    obs = _stock(env, [30, 30, 30])
    action = hold_action(obs)
    action["visit"][0] = 1
    action["slot_product"][0, :2] = [0, 1]
    action["slot_target"] = action["slot_target"].astype(float)
    action["slot_target"][0, :2] = [2.5, 4]  # a fraction of a unit
    action["slot_price"][0, 1] = np.nan
    action["order"][0] = -3
    obs, _, _, _, info = env.step(action)
    assert info["slot_refused"][0, 0] == CODE["invalid_qty"] and obs["slot_product"][0, 0] == -1
    assert (
        info["price_refused"][0, 1] == CODE["invalid_price"] and obs["slot_units"][0, 1] + obs["slot_sold"][0, 1] == 4
    )
    assert info["order_refused"][0] == CODE["invalid_qty"] and obs["in_transit"][0] == 0
    with pytest.raises(ValueError, match=r"action\['order'\] has shape \(5,\); it must be \(12,\)"):
        env.step({"order": np.zeros(5)})
    with pytest.raises(ValueError, match="unknown action keys \\['restock'\\]"):
        env.step({"restock": np.zeros(3)})


SEEDS_REFUSED = [
    pytest.param(True, r"seed must be a whole number >= 0, got True \(a boolean\)", id="true"),
    pytest.param(np.bool_(True), r"\(a boolean\)", id="numpy-bool"),
    pytest.param(1.5, r"got 1.5 \(a float\)", id="float"),
    pytest.param("1", r"got '1' \(a str\)", id="text"),
    pytest.param(-1, r"got -1; pass 0 or more", id="negative"),
]


@pytest.mark.parametrize(("seed", "message"), SEEDS_REFUSED)
def test_a_seed_that_is_no_whole_number_is_refused_at_every_array_door(world, seed, message):
    """The array doors take seeds by the rule of every other door (`autovend.rng.run_seed`); nothing is reset."""
    from autovend.arrays.core import ArraySim
    from autovend.arrays.env import array_sim_of

    env = ArrayVendEnv(world, slots=3)
    obs, _ = env.reset(seed=2)
    env.step(hold_action(obs))
    with pytest.raises(ValueError, match=message):
        env.reset(seed=seed)
    assert array_sim_of(env).day == 2  # the run under way goes on
    envs = ArrayVendVectorEnv(2, world=world, slots=3)
    vobs, _ = envs.reset(seed=[7, 8])
    envs.step(hold_action(vobs))
    with pytest.raises(ValueError, match=message):
        envs.reset(seed=seed)
    with pytest.raises(ValueError, match=message.replace("seed must", r"seed\[1\] must")):
        envs.reset(seed=[3, seed])
    assert array_sim_of(envs).day == 2
    sim = ArraySim(world, 2, slots=3)
    with pytest.raises(ValueError, match=message.replace("seed must", r"seeds\[0\] must")):
        sim.reset([seed, 4])


def test_array_seeds_and_counts_take_numpy_integers_and_refuse_the_rest(world):
    from autovend.arrays.core import ArraySim
    from autovend.arrays.env import array_sim_of

    a, b = ArrayVendVectorEnv(np.int64(2), world=world, slots=3), ArrayVendVectorEnv(2, world=world, slots=3)
    assert type(a.num_envs) is int
    assert data_equivalence(a.reset(seed=np.int64(3)), b.reset(seed=3))
    assert data_equivalence(a.reset(seed=np.array([3, 9])), b.reset(seed=[3, 9]))
    assert array_sim_of(a).state.seeds.tolist() == [3, 9]
    with pytest.raises(ValueError, match="seed lists 3 seeds for 2 environments"):
        a.reset(seed=[1, 2, 3])
    for bad in (True, 0, 2.0, "2"):
        with pytest.raises(ValueError, match="num_envs must be a whole number >= 1"):
            ArrayVendVectorEnv(bad, world=world, slots=3)
        with pytest.raises(ValueError, match="n_runs must be a whole number >= 1"):
            ArraySim(world, bad)
        with pytest.raises(ValueError, match="slots must be a whole number >= 1"):
            ArraySim(world, 1, slots=bad)
    with pytest.raises(ValueError, match=r"reset needs 2 seeds \(a list or a 1-d array\), got 5 \(of type int\)"):
        ArraySim(world, 2).reset(5)
    with pytest.raises(ValueError, match=r"got a 2-d array"):
        ArraySim(world, 2).reset(np.ones((2, 1), dtype=int))


def test_the_facts_name_the_worlds_currency(world):
    """Amounts are in the world's currency (main's rule for every surface); the facts say which."""
    assert ArrayVendEnv(world, slots=3).facts.currency == "CNY"
    uah = toy_world(3, 12, seed=0, economics=Economics(horizon_days=8, currency="UAH"))
    assert ArrayVendVectorEnv(2, world=uah, slots=3).facts.currency == "UAH"


def test_a_world_with_conditions_is_refused_and_one_changed_in_its_tables_is_played(world):
    """The array simulator does not model a scenario's conditions (a breakdown here): it refuses the world in words
    instead of scoring a run on another world; a scenario that only changes tables (unit costs) yields a plain world."""
    from autovend.arrays.core import ArraySim
    from autovend.errors import ConfigError
    from autovend.world.derive import apply_scenario
    from autovend.world.scenario import Scenario

    broken = apply_scenario(
        world,
        Scenario.model_validate(
            {
                "name": "down",
                "summary": "s",
                "tests": "t",
                "shows": "w",
                "changes": {"breakdowns": [{"machines": {"busiest": 1}, "first_day": 3, "last_day": 4}]},
            }
        ),
    )
    with pytest.raises(ConfigError, match=r"has conditions \(breakdowns\) that the array simulator does not model"):
        ArraySim(broken, 2)
    with pytest.raises(ConfigError, match="play it with AutoVend-v0"):
        ArrayVendVectorEnv(2, world=broken)
    dearer = apply_scenario(world, "cost-inflation")
    sim = ArraySim(dearer, 2)
    sim.reset([1, 2])
    assert (sim.facts.cost_fen > ArraySim(world, 1).facts.cost_fen).all()

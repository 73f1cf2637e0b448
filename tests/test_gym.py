"""autovend.gym: AutoVend-v0 passes gymnasium's env checker; actions, observations, rewards, the days limit."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given
from hypothesis import strategies as st

import autovend.gym  # noqa: F401 - registers AutoVend-v0
from autovend.env.boundary import simulator_of
from autovend.gym import AutoVendEnv, parse_action
from autovend.session import ToolSession
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world

from .env.walker import find_privileged
from .fuzz import QUIET_TOOLS, arguments, dumps_hostile, fingerprint, fuzz, json_texts, text

ROOT = Path(__file__).resolve().parents[1]
FEE = 3 * 4.0  # the daily fee of the toy world's 3 machines
END = '{"end_day": true}'


@pytest.fixture(scope="module")
def world() -> World:
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=5))


def _act(tool: str, **args) -> str:
    return json.dumps({"tool": tool, "args": args})


def test_make_on_cn20_passes_the_env_checker(monkeypatch):
    monkeypatch.chdir(ROOT)
    env = gymnasium.make("AutoVend-v0", world="worlds/cn20")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []
    with pytest.warns(UserWarning, match="different from the unwrapped version"):
        check_env(env)  # through gymnasium.make's wrappers too: it only warns that they are there
    obs, info = env.reset(seed=1)
    assert obs["kind"] == "report" and obs["day"] == 1 and obs in env.observation_space
    assert json.loads(obs["text"])["report"]["balance"]["net_assets"] == 40_000 - 80
    env.close()


def test_make_without_a_world_plays_the_shipped_cn20_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no worlds/ here: the default world is a name, not a relative path
    for env in (gymnasium.make("AutoVend-v0", days=2), gymnasium.make("AutoVend-v0", world="cn20")):
        obs, _ = env.reset(seed=1)
        assert json.loads(obs["text"])["report"]["balance"]["net_assets"] == 40_000 - 80
        assert env.unwrapped.observation_space["day"].n == 180
        env.close()


def test_an_episode_of_tool_calls_and_days(world):
    env = AutoVendEnv(world, render_mode="ansi")
    obs, _ = env.reset(seed=1)
    assert env.render().startswith("Day 1 of 5 — Wednesday, 2025-01-01.")
    obs, reward, terminated, truncated, info = env.step(_act("place_order", items=[{"sku_id": "SKU0001", "qty": 10}]))
    result = json.loads(obs["text"])
    assert (obs["kind"], reward, terminated, truncated) == ("result", 0.0, False, False)
    assert result["ok"] and result["content"]["accepted"][0]["index"] == 0 and info["tool"] == "place_order"
    assert env.render() == obs["text"]
    rewards = []
    terminated = False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(END)
        assert obs["kind"] == "report" and not truncated
        rewards.append(reward)
    assert rewards[0] == -FEE and len(rewards) == 5
    final = json.loads(obs["text"])
    assert final["done"] and final["day"] == 5
    assert round(sum(rewards), 2) == round(final["report"]["balance"]["net_assets"] - 40_000, 2)
    # after the end every action is refused, with no reward
    obs, reward, terminated, truncated, info = env.step(END)
    assert obs["kind"] == "result" and reward == 0.0 and terminated and not info["ok"]
    assert "episode is over" in info["error"]
    env.close()


@pytest.mark.parametrize(
    ("action", "message"),
    [
        pytest.param("nonsense", "not valid JSON", id="not-json"),
        pytest.param('["end_day"]', 'an action is a JSON text {"tool": NAME', id="a-list"),
        pytest.param('{"end_day": true, "tool": "x"}', "an action is a JSON text", id="both-forms"),
        pytest.param('{"tool": "get_weather", "args": [1]}', "args must be a JSON object", id="args-list"),
        pytest.param('{"tool": "fly"}', "there is no tool 'fly'", id="unknown-tool"),
        pytest.param(_act("restock", items=[]), "items", id="bad-arguments"),
    ],
)
def test_malformed_actions_are_error_results_that_change_nothing(world, action, message):
    env = AutoVendEnv(world)
    first, _ = env.reset(seed=2)
    obs, reward, terminated, truncated, info = env.step(action)
    assert (obs["kind"], reward, terminated, truncated, info["ok"]) == ("result", 0.0, False, False, False)
    assert message in info["error"] and json.loads(obs["text"])["error"] == info["error"]
    env.step(_act("get_weather"))  # a valid read changes nothing either
    report = env.unwrapped._env.observation().to_json()
    assert report == first["text"]  # the same day, the same state
    env.close()


def test_parse_action_forms():
    assert parse_action(END) == ("end_day", {})
    assert parse_action('{"tool": "end_day"}') == ("end_day", {})
    assert parse_action('{"tool": "get_catalog", "args": {"page": 2}}') == ("get_catalog", {"page": 2})
    assert "got a int" in parse_action(3)  # type: ignore[arg-type,operator]


def test_days_truncate_and_the_seed_is_the_run_seed(world):
    env = AutoVendEnv(world, days=2)
    env.reset(seed=7)
    order = _act("place_order", items=[{"sku_id": "SKU0002", "qty": 6}])
    env.step(order)
    first = env.step(END)
    second = env.step(END)
    assert (first[3], second[3], second[2]) == (False, True, False)  # truncated, truncated, terminated
    refused = env.step(_act("get_weather"))
    assert not refused[4]["ok"] and "set to 2 days" in refused[4]["error"]
    # the same calls on a ToolSession with run seed 7 give the same money
    session = ToolSession(world, seed=7)
    session.call("place_order", json.loads(order)["args"])
    session.call("end_day")
    session.call("end_day")
    assert simulator_of(session).balance() == simulator_of(env._env).balance()
    env.close()
    session.close()


def test_nothing_the_gym_env_hands_out_reaches_the_truth(world, monkeypatch):
    env = AutoVendEnv(world)
    handed = [env, env.reset(seed=3), env.step(_act("get_warehouse")), env.step(END), env.action_space]
    handed.append(env.observation_space)
    assert find_privileged(handed, world) == []
    monkeypatch.chdir(ROOT)
    made = gymnasium.make("AutoVend-v0", world="worlds/cn20", days=1)
    handed = [made, made.reset(seed=1), made.step(END)]
    cn20 = simulator_of(made.unwrapped._env).world
    assert find_privileged(handed, cn20) == []
    made.close()
    env.close()


@pytest.mark.parametrize(
    "action,message",
    [
        pytest.param(
            '{"tool": "get_warehouse", "args": {"page": 1' + "0" * 5000 + "}}",
            "args.page in the action is an integer of 5,001 digits, outside the integers JSON readers hold exactly",
            id="int-5001-digits",
        ),
        pytest.param("[" * 50_000 + "]" * 50_000, "the action: nested too deeply to read", id="nested-50000"),
        pytest.param(
            '{"tool": "get_weather", "args": ' + "[" * 40 + "]" * 40 + "}",
            "args[0][0]",
            id="nested-41",
        ),
        pytest.param(
            '{"tool": "get_weather", "tool": "end_day"}',
            "the action: the key 'tool' is given twice",
            id="duplicate-tool",
        ),
        pytest.param(
            '{"tool": "write_memory", "args": {"text": "a", "text": "b"}}',
            "args in the action: the key 'text' is given twice",
            id="duplicate-arg",
        ),
        pytest.param(
            '{"tool": "get_catalog", "args": {"price_min": NaN}}', "args.price_min in the action is NaN", id="nan"
        ),
        pytest.param(
            '{"tool": "write_memory", "args": {"text": "\\ud800"}}',
            "args.text in the action holds a lone UTF-16 surrogate (U+D800)",
            id="surrogate",
        ),
        pytest.param(" " * 131_073, "the action has 131,073 characters, over the limit of 131,072", id="too-long"),
    ],
)
def test_a_hostile_action_is_refused_and_changes_nothing(world, tmp_path, action, message):
    env = AutoVendEnv(world)
    env.reset(seed=1)
    before = (env._env.day, env._env.notebook, env._env.counters)
    obs, reward, terminated, truncated, info = env.step(action)
    assert (info["ok"], reward, terminated, truncated, obs["kind"]) == (False, 0.0, False, False, "result")
    assert message in info["error"] and len(info["error"]) < 500
    assert json.loads(obs["text"])["error"] == info["error"] and obs in env.observation_space
    assert (env._env.day, env._env.notebook, env._env.counters) == before  # nothing ran, nothing was counted
    env.close()


@pytest.mark.slow
@fuzz(400)
@given(
    action=st.one_of(
        st.tuples(st.one_of(st.sampled_from(QUIET_TOOLS), text), arguments).map(
            lambda t: dumps_hostile({"tool": t[0], "args": t[1]})
        ),
        json_texts,
    )
)
def test_fuzz_any_action_is_an_observation_and_a_refused_one_changes_nothing(fuzzed_env, action):
    env = fuzzed_env
    before = fingerprint(simulator_of(env._env), env._env.notebook)
    obs, reward, terminated, truncated, info = env.step(action)
    assert obs in env.observation_space and reward == 0.0 and not (terminated or truncated)
    assert json.loads(obs["text"])["ok"] == info["ok"]
    if not info["ok"]:
        assert 0 < len(info["error"]) < 2_000
        assert fingerprint(simulator_of(env._env), env._env.notebook) == before


@pytest.fixture(scope="module")
def fuzzed_env(world):
    env = AutoVendEnv(world)
    env.reset(seed=1)
    yield env
    env.close()


@pytest.mark.parametrize(
    "action",
    [
        pytest.param('{"tool": "end_day", "args": {"foo": 1}}', id="unknown-argument"),
        pytest.param('{"tool": "end_day", "args": {"confirm": true}}', id="another-unknown-argument"),
    ],
)
def test_end_day_with_arguments_is_refused_as_tool_session_refuses_it(world, action):
    """The gym env ended the day whatever the arguments; ToolSession refuses them: now both give the same refusal."""
    env = AutoVendEnv(world)
    first, _ = env.reset(seed=3)
    obs, reward, terminated, truncated, info = env.step(action)
    session = ToolSession(world, seed=3)
    refused = session.call("end_day", json.loads(action)["args"])
    assert not refused.ok and "malformed arguments, nothing was done" in refused.error
    assert (obs["kind"], reward, terminated, truncated, info["ok"]) == ("result", 0.0, False, False, False)
    assert info["error"] == refused.error
    assert json.loads(obs["text"])["content"] == json.loads(refused.to_json())
    assert env.unwrapped._env.day == session.day == 1  # the day goes on
    assert env.unwrapped._env.observation().to_json() == first["text"]
    # the VendingEnv under it takes end_day's arguments the same way
    step = env.unwrapped._env.end_day(json.loads(action)["args"])
    assert step.reward == 0.0 and step.info == {"error": refused.error} and step.observation.day == 1
    assert env.step(END)[0]["day"] == 2  # and a proper end_day still ends it
    env.close()
    session.close()


@pytest.mark.parametrize(
    ("seed", "message"),
    [
        pytest.param(True, "seed must be a whole number >= 0, got True (a boolean)", id="true"),
        pytest.param(False, "got False (a boolean)", id="false"),
        pytest.param(1.5, "got 1.5 (a float)", id="float"),
        pytest.param(1.0, "got 1.0 (a float)", id="whole-float"),
        pytest.param("1", "got '1' (a str)", id="text"),
        pytest.param(-1, "got -1; pass 0 or more", id="negative"),
    ],
)
def test_a_seed_that_is_no_whole_number_is_refused_everywhere(world, seed, message):
    """reset(seed=True) ran seed 1 and 1.5 crashed in gymnasium; the env, VendingEnv and ToolSession refuse both."""
    env = AutoVendEnv(world)
    before, _ = env.reset(seed=2)
    env.step(END)
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        env.reset(seed=seed)
    assert env.unwrapped._env.day == 2  # the episode under way goes on
    with pytest.raises(ValueError, match="seed must be a whole number >= 0"):
        env.unwrapped._env.reset(seed)
    with pytest.raises(ValueError, match="seed must be a whole number >= 0"):
        ToolSession(world, seed=seed)
    env.close()


def test_a_numpy_integer_seed_is_its_int(world):
    import numpy as np

    a, b = AutoVendEnv(world), AutoVendEnv(world)
    assert a.reset(seed=np.int64(4))[0] == b.reset(seed=4)[0]
    assert simulator_of(a._env).seed == 4 and type(simulator_of(a._env).seed) is int


@pytest.mark.parametrize("notebook", [{"plan": "restock"}, ["a"], 5, None], ids=["dict", "list", "int", "none"])
def test_a_notebook_that_is_no_text_is_refused_not_stored_as_its_repr(world, notebook):
    """options={"notebook": {...}} was stored as "{'plan': 'restock'}"; write_memory only ever writes a string."""
    env = AutoVendEnv(world)
    with pytest.raises(ValueError, match=r"options\['notebook'\] must be text \(a str\)"):
        env.reset(seed=1, options={"notebook": notebook})
    with pytest.raises(ValueError, match=r"notebook must be text \(a str\).*json.dumps"):
        ToolSession(world, seed=1, notebook=notebook)
    env.reset(seed=1, options={"notebook": json.dumps({"plan": "restock"})})
    assert env._env.notebook == '{"plan": "restock"}'
    with pytest.raises(ValueError, match="options must be a dict"):
        env.reset(seed=1, options="notebook")  # type: ignore[arg-type]

"""The knob agent (`autovend.agents.knobs`): its plan steps driven by hand, and what it refuses before it runs."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from autovend.agents.knobs import KnobAgent, Knobs, _all_pages, run_episodes
from autovend.vector import AutoVendVectorEnv
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world


@pytest.fixture(scope="module")
def world() -> World:
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=4))


def test_a_paged_tool_is_read_page_by_page_until_its_last():
    pages = {1: [["a", 1], ["b", 2]], 2: [["c", 3]], 3: [["d", 4]]}
    plan = _all_pages("get_warehouse")
    asked = [json.loads(next(plan))]
    try:
        while True:
            page = asked[-1]["args"]["page"]
            answer = {"content": {"pages": 3, "columns": ["sku_id", "units"], "rows": pages[page]}}
            asked.append(json.loads(plan.send(answer)))
    except StopIteration as done:
        cols, rows = done.value
    assert [a["args"] for a in asked] == [{"page": p, "page_size": 50} for p in (1, 2, 3)]
    assert {a["tool"] for a in asked} == {"get_warehouse"}
    assert (cols, rows) == (["sku_id", "units"], [["a", 1], ["b", 2], ["c", 3], ["d", 4]])


def test_an_empty_table_is_one_request():
    plan = _all_pages("get_catalog")
    assert json.loads(next(plan))["args"]["page"] == 1
    try:
        plan.send({"content": {"pages": 0, "columns": ["sku_id"], "rows": []}})
    except StopIteration as done:
        assert done.value == (["sku_id"], [])
    else:
        raise AssertionError("a second page was asked for")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"visit_every": 0}, "visit_every must be a whole number >= 1, got 0", id="visit-every-0"),
        pytest.param({"facing": 2.5}, "facing must be a whole number >= 1, got 2.5", id="facing-float"),
        pytest.param({"n_skus": True}, "n_skus must be a whole number >= 1, got True", id="n-skus-bool"),
        pytest.param({"price_mult": float("nan")}, "price_mult must be a finite number > 0, got nan", id="nan-price"),
        pytest.param({"price_mult": 0.0}, "price_mult must be a finite number > 0, got 0.0", id="zero-price"),
        pytest.param({"cover_days": float("inf")}, "cover_days must be a finite number >= 0, got inf", id="inf-cover"),
        pytest.param({"cover_days": "8"}, "cover_days must be a finite number >= 0, got '8'", id="text-cover"),
    ],
)
def test_knobs_that_cannot_run_are_refused_when_made(kwargs, message):
    """visit_every=0 divided by zero on the first working day, NaN knobs crashed mid-episode: now refused at once."""
    with pytest.raises(ValueError, match=re.escape(message)):
        Knobs(**kwargs)


@pytest.mark.parametrize(
    ("theta", "message"),
    [
        pytest.param([np.nan, 0.5, 0.5, 0.5, 0.5], "non-finite entries: price_mult (nan)", id="nan"),
        pytest.param([0.5, 0.5, 0.5, 0.5, np.inf], "non-finite entries: visit_every (inf)", id="inf"),
        pytest.param([0.5] * 4, "must be 5 numbers in [0, 1]", id="short"),
        pytest.param([[0.5] * 5], "got shape (1, 5)", id="nested"),
        pytest.param(["x"] * 5, "must be 5 numbers in [0, 1]", id="text"),
    ],
)
def test_a_knob_vector_with_nan_or_of_another_length_is_refused(theta, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        Knobs.from_vector(theta)


def test_a_knob_vector_maps_onto_the_ranges():
    assert Knobs.from_vector([0, 0, 0, 0, 0]) == Knobs(1.0, 2, 6, 2.0, 1)
    assert Knobs.from_vector([1, 1, 1, 1, 1]) == Knobs(2.0, 10, 40, 21.0, 7)
    assert Knobs.from_vector([2, -1, 0.5, 0.5, 0.5]) == Knobs(2.0, 2, 23, 11.5, 4)  # clipped to [0, 1]


@pytest.mark.parametrize(
    ("observation", "message"),
    [
        pytest.param({}, "a dict with 'kind', 'day' and 'text'", id="empty"),
        pytest.param("report", "a dict with 'kind', 'day' and 'text'", id="a-string"),
        pytest.param({"kind": "report", "day": 1, "text": "{not json"}, "the observation's text is not JSON", id="bad"),
        pytest.param({"kind": "report", "day": 1, "text": "[1]"}, "no JSON object", id="a-list"),
        pytest.param(
            {"kind": "result", "day": 1, "text": '{"ok": true, "content": {}, "error": null}'},
            "takes the day-1 report",
            id="a-result",
        ),
        pytest.param(
            {"kind": "report", "day": 1, "text": '{"report": {"devices": {"rows": []}}, "is_workday": true}'},
            "takes the day-1 report",
            id="no-machines",
        ),
        pytest.param(
            {"kind": "report", "day": 1, "text": '{"report": {"devices": {"rows": [["M1"]]}}}'},
            "no is_workday flag",
            id="no-workday",
        ),
    ],
)
def test_a_malformed_observation_is_refused_before_anything_runs(observation, message):
    agent = KnobAgent(Knobs())
    with pytest.raises(ValueError, match=re.escape(message)):
        agent.start(observation)
    with pytest.raises(RuntimeError, match="start"):  # no episode was begun
        agent.act(observation)


def test_an_error_result_names_the_tool_and_the_envs_error():
    agent = KnobAgent(Knobs())
    day1 = {"report": {"devices": {"rows": [["M1"]]}}, "is_workday": True}
    first = json.loads(agent.start({"kind": "report", "day": 1, "text": json.dumps(day1)}))
    assert first["tool"] == "get_catalog"
    error = {"ok": False, "content": {"error": "page must be >= 1"}, "error": "page must be >= 1"}
    with pytest.raises(RuntimeError, match="KnobAgent: get_catalog did not answer as expected: page must be >= 1"):
        agent.act({"kind": "result", "day": 1, "text": json.dumps(error)})
    with pytest.raises(ValueError, match="a dict with 'kind', 'day' and 'text'"):
        agent.act({"kind": "result"})


def test_run_episodes_needs_one_knob_setting_and_one_seed_per_env(world):
    envs = AutoVendVectorEnv(2, world=world)
    with pytest.raises(ValueError, match="knobs has 1 entries for 2 environments; give 2"):
        run_episodes(envs, [Knobs()], [1, 2])
    with pytest.raises(ValueError, match="seeds has 3 entries for 2 environments; give 2"):
        run_episodes(envs, [Knobs()] * 2, [1, 2, 3])
    with pytest.raises(TypeError, match="KnobAgent takes a Knobs, got a dict"):
        KnobAgent({"price_mult": 1.0})  # type: ignore[arg-type]
    envs.close()


def test_the_knob_agent_plays_a_run_as_it_plays_the_vector_env(tmp_path):
    """`KnobRunAgent` through `autovend run`'s runner ends where `run_episodes` on the native vector env ends."""
    import gymnasium

    import autovend.gym  # noqa: F401
    from autovend.agents.knobs import KnobRunAgent, Knobs, run_episodes
    from autovend.runner import run_episode
    from autovend.world.bundle import as_world

    envs = gymnasium.make_vec("AutoVend-v0", num_envs=1, world="cn20", days=12)
    (want,) = run_episodes(envs, [Knobs()], [3])
    envs.close()
    summary = run_episode(
        as_world("cn20"), KnobRunAgent(seed=3), 3, days=12, out_dir=tmp_path / "run", checkpoint="off"
    )
    assert summary.final_net_assets == want
    with pytest.raises(RuntimeError, match="cannot be checkpointed"):
        KnobRunAgent().state_dict()

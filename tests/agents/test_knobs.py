"""The knob agent's plan steps (`autovend.agents.knobs`), driven by hand without an environment."""

from __future__ import annotations

import json

import pytest

from autovend.agents.knobs import _all_pages


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

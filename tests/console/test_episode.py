"""A played episode: the same run folder as any agent's, resumable, refused where a run is finished."""

from __future__ import annotations

import json

import pytest

from autovend.console.episode import EpisodeOver, PlayEpisode
from autovend.errors import AutoVendError, OutputExistsError
from autovend.evaluation.rundata import read_calls
from autovend.runner import run_episode

from .conftest import small_world

PLAN = {
    1: [
        ("place_order", {"items": [{"sku_id": "SKU0001", "qty": 10}, {"sku_id": "SKU0002", "qty": 5}]}),
        ("get_warehouse", {}),
        ("adjust_price", {"items": [{"device_id": "CN_WORKSITE_01", "sku_id": "SKU0001", "price": 99.0}]}),
    ],
    2: [("write_memory", {"text": "ordered SKU0001 and SKU0002"})],
}


class ScriptedAgent:
    """The PLAN as an ordinary agent (named like the person, so that run.json says the same)."""

    name = "human"

    def start(self, session):
        pass

    def act_day(self, session):
        for tool, args in PLAN.get(session.day, []):
            session.call(tool, args)
        session.call("end_day", {})

    def state_dict(self):
        return {}

    def load_state(self, state):
        pass


def _strip(calls):
    return [{k: v for k, v in c.items() if k != "wall_ms"} for c in calls]


@pytest.mark.slow
def test_a_played_episode_writes_what_an_agent_writes(tmp_path):
    world = small_world()
    ep = PlayEpisode(world, 1, tmp_path / "played", days=2).start()
    try:
        for day in (1, 2):
            assert ep.state().day == day
            for tool, args in PLAN[day]:
                ep.call(tool, args)
            assert ep.call("end_day", {}).ok
        state = ep.state()
    finally:
        ep.close()
    run_episode(world, ScriptedAgent(), 1, days=2, out_dir=tmp_path / "scripted", checkpoint="off")
    played, scripted = tmp_path / "played", tmp_path / "scripted"
    assert (state.day, state.settled, state.finished) == (2, 2, True)
    assert state.snapshot.notebook == "ordered SKU0001 and SKU0002"
    assert (played / "daily.csv").read_bytes() == (scripted / "daily.csv").read_bytes()
    metrics = json.loads((played / "metrics.json").read_text())
    expected = json.loads((scripted / "metrics.json").read_text())
    assert metrics.pop("run")["name"] == "played" and expected.pop("run")["name"] == "scripted"
    assert metrics == expected
    assert state.metrics == json.loads((played / "metrics.json").read_text())
    # two days' fee of 3 machines x 4.00; the order (10 x 2.01 + 5 x 4.14 = 40.80) left cash but is in transit
    assert metrics["net_assets"] == pytest.approx(40_000.0 - 24.0)
    assert state.snapshot.report["balance"]["cash"] == pytest.approx(40_000.0 - 24.0 - 40.80)
    assert _strip(read_calls(played / "trajectory.jsonl")) == _strip(read_calls(scripted / "trajectory.jsonl"))
    assert [c["tool"] for c in read_calls(played / "trajectory.jsonl")] == [
        "place_order",
        "get_warehouse",
        "adjust_price",
        "end_day",
        "write_memory",
        "end_day",
    ]
    for name in ("run.json", "records.sqlite", "hidden.sqlite", "report.md", "report.html"):
        assert (played / name).exists(), name
    assert json.loads((played / "run.json").read_text())["agent"] == "human"
    assert not (played / "checkpoint").exists()


def test_a_stopped_episode_resumes_at_its_last_settled_day(tmp_path):
    world, out = small_world(), tmp_path / "run"
    ep = PlayEpisode(world, 1, out, days=2).start()
    ep.call("place_order", PLAN[1][0][1])
    ep.call("end_day", {})
    ep.call("write_memory", {"text": "lost: day 2 is not settled"})
    ep.close()
    assert (out / "checkpoint" / "checkpoint.pkl").exists()
    again = PlayEpisode(world, 1, out, days=2).start()
    try:
        assert again.resumed
        state = again.state()
        assert (state.day, state.settled, state.snapshot.notebook) == (2, 1, "")
        assert [c["tool"] for c in read_calls(out / "trajectory.jsonl")] == ["place_order", "end_day"]
        assert state.snapshot.counters["seq"] == 2
        assert again.call("end_day", {}).ok
        assert again.state().finished
    finally:
        again.close()
    assert json.loads((out / "run.json").read_text())["resumed_from_day"] == 1
    assert (out / "metrics.json").exists()


def test_calls_after_the_end_are_refused(tmp_path):
    ep = PlayEpisode(small_world(), 1, tmp_path / "run", days=1).start()
    try:
        ep.call("end_day", {})
        with pytest.raises(EpisodeOver, match="the episode is over \\(1 days settled\\)"):
            ep.call("get_warehouse", {})
        assert (
            ep.state().metrics["net_assets"]
            == json.loads((tmp_path / "run" / "metrics.json").read_text())["net_assets"]
        )
    finally:
        ep.close()


def test_a_finished_run_is_not_played_again(tmp_path):
    out = tmp_path / "run"
    ep = PlayEpisode(small_world(), 1, out, days=1).start()
    ep.call("end_day", {})
    ep.close()
    with pytest.raises(OutputExistsError, match=f"autovend console --run {out}"):
        PlayEpisode(small_world(), 1, out, days=1).start()


def test_a_checkpoint_of_another_seed_is_refused(tmp_path):
    out = tmp_path / "run"
    ep = PlayEpisode(small_world(), 1, out, days=2).start()
    ep.call("end_day", {})
    ep.close()
    with pytest.raises(AutoVendError, match="belongs to another run: seed 1 \\(now 2\\)"):
        PlayEpisode(small_world(), 2, out, days=2).start()


def test_days_outside_the_horizon_are_refused(tmp_path):
    with pytest.raises(AutoVendError, match="between 1 and the world's horizon 5, got 6"):
        PlayEpisode(small_world(), 1, tmp_path, days=6)

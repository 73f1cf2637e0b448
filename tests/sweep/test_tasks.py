"""The runs of a sweep: their folders and order, the state of a folder, and the task a worker runs (here in process)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from autovend.agents.base import make_agent
from autovend.errors import ConfigError
from autovend.runner import run_episode
from autovend.sweep import parse_spec
from autovend.sweep.results import read_result
from autovend.sweep.tasks import (
    TIMED_OUT_FILE,
    AgentIdentity,
    Channel,
    RunProcessError,
    WorldFacts,
    execute,
    folder_status,
    plan,
)
from autovend.world.bundle import load_world
from tests.sweep.conftest import autovend_run, metrics, run_json, trajectory

FACTS = {"toy20": WorldFacts("/data/toy20", "ab" * 32, 30)}


def _spec(**extra):
    data = {"worlds": ["/data/toy20"], "agents": ["baseline"], "seeds": [1], "days": 3}
    return parse_spec({**data, **extra})


def test_plan_names_one_folder_per_world_agent_seed_in_spec_order(tmp_path):
    spec = _spec(agents=["baseline", {"agent": "baseline", "name": "b2"}], seeds=[3, 1], days=None)
    tasks = plan(spec, tmp_path, FACTS)
    assert [t.name for t in tasks] == [
        "toy20/baseline-s3-d30",
        "toy20/baseline-s1-d30",
        "toy20/b2-s3-d30",
        "toy20/b2-s1-d30",
    ]  # days default to the world's horizon
    assert tasks[0].run_dir == str(tmp_path.resolve() / "runs" / "toy20" / "baseline-s3-d30")
    assert tasks[0].world_path == "/data/toy20" and tasks[0].world_hash == "ab" * 32


def test_plan_makes_config_paths_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (task,) = plan(_spec(agents=[{"agent": "baseline", "config": "cfg/alt.yaml"}]), tmp_path, FACTS)
    assert task.agent.config == tmp_path.resolve() / "cfg" / "alt.yaml"
    assert task.name == "toy20/baseline-alt-s1-d3"  # the label keeps the config's stem


def test_plan_refuses_more_days_than_the_horizon(tmp_path):
    with pytest.raises(ConfigError, match="days: 31 is longer than the horizon of world toy20 \\(30 days\\)"):
        plan(_spec(days=31), tmp_path, FACTS)


@pytest.fixture
def toy_task(toy_bundle, tmp_path):
    world = load_world(toy_bundle)
    facts = {"toy20": WorldFacts(str(toy_bundle), world.world_hash, world.horizon_days)}
    spec = parse_spec({"worlds": [str(toy_bundle)], "agents": ["baseline"], "seeds": [1], "days": 4})
    (task,) = plan(spec, tmp_path / "sweep", facts)
    return task


class _Stop(Exception):
    pass


def _interrupt_after(day: int):
    def progress(p):
        if p.day == day:
            raise _Stop

    return progress


def test_folder_states_new_unfinished_finished(toy_task, toy_bundle):
    world = load_world(toy_bundle)
    assert folder_status(toy_task) == ("new", None)
    with pytest.raises(_Stop):  # interrupted after day 2: its checkpoint stays
        run_episode(
            world,
            make_agent("baseline", 1),
            1,
            days=4,
            out_dir=toy_task.run_dir,
            checkpoint="sync",
            progress=_interrupt_after(2),
        )
    assert folder_status(toy_task) == ("unfinished", None)
    run_episode(world, make_agent("baseline", 1), 1, days=4, out_dir=toy_task.run_dir, resume=True, checkpoint="sync")
    assert folder_status(toy_task, AgentIdentity("baseline")) == ("finished", None)
    state, why = folder_status(toy_task, AgentIdentity("baseline", {"n_skus": 3}))
    assert state == "finished"
    assert (
        why
        == f"{toy_task.run_dir} holds a finished run of another setting: the agent's configuration differs from the spec's config file"
    )


def test_execute_resumes_an_interrupted_run_into_the_result_of_autovend_run(toy_task, toy_bundle, tmp_path):
    with pytest.raises(_Stop):
        run_episode(
            load_world(toy_bundle),
            make_agent("baseline", 1),
            1,
            days=4,
            out_dir=toy_task.run_dir,
            checkpoint="sync",
            progress=_interrupt_after(2),
        )
    channel = Channel(topic="t", stop="s")  # outside Dask: no events, no stop flag, no leases
    outcome = execute(toy_task, channel)
    assert outcome.status == "ran" and outcome.resumed_from == 2 and outcome.error is None
    ref = autovend_run(toy_bundle, 1, 4, tmp_path / "ref")
    run_dir = Path(toy_task.run_dir)
    assert metrics(run_dir) == metrics(ref)
    assert trajectory(run_dir) == trajectory(ref)
    assert run_json(run_dir)["resumed_from_day"] == 2 and run_json(run_dir)["world_path"] == str(toy_bundle)
    again = execute(toy_task, channel)  # finished: left as it is
    assert again.status == "finished"


def test_execute_reports_a_checkpoint_of_another_run_as_failed_without_raising(toy_task, toy_bundle):
    with pytest.raises(_Stop):  # seed 2's checkpoint in seed 1's folder
        run_episode(
            load_world(toy_bundle),
            make_agent("baseline", 2),
            2,
            days=4,
            out_dir=toy_task.run_dir,
            checkpoint="sync",
            progress=_interrupt_after(1),
        )
    outcome = execute(toy_task, Channel(topic="t", stop="s"))
    assert outcome.status == "failed"
    assert "belongs to another run: seed 2 (now 1)" in (outcome.error or "")


def test_a_plugin_file_keeps_its_label_when_its_path_is_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "hold.py").write_text("")
    (task,) = plan(_spec(agents=["agents/hold.py:HoldAgent"]), tmp_path, FACTS)
    assert task.agent.agent == f"{tmp_path.resolve() / 'agents' / 'hold.py'}:HoldAgent"
    assert task.name == "toy20/hold-HoldAgent-s1-d3"
    assert task.run_dir.endswith("/runs/toy20/hold-HoldAgent-s1-d3")


def test_plan_finds_a_shipped_agent_config_by_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (task,) = plan(_spec(agents=[{"agent": "baseline", "config": "baseline-paper"}]), tmp_path, FACTS)
    assert task.agent.config is not None and task.agent.config.is_file()
    assert task.agent.config.parent.name == "configs" and task.name == "toy20/baseline-baseline-paper-s1-d3"


PLUGIN = '''
import os, time
from pathlib import Path

HOLD = Path({hold!r})


class Stuck:
    """Sleeps in act_day on day 2 while the file HOLD exists; calls os._exit(3) there when it holds "exit", and
    when it holds "forge" writes a finished outcome to the events pipe of its process and exits 0."""

    name = "stuck"

    def __init__(self, seed=0):
        self.seed = seed

    def start(self, session):
        pass

    def act_day(self, session):
        if session.day == 2 and HOLD.exists():
            if HOLD.read_text() == "exit":
                os._exit(3)
            if HOLD.read_text() == "forge":
                import sys
                os.write(int(sys.argv[1]), b'{{"kind": "outcome", "status": "ran", "resumed_from": null}}\\n')
                os._exit(0)
            time.sleep(600)
        session.call("end_day", {{}})

    def state_dict(self):
        return {{}}

    def load_state(self, state):
        pass
'''


@pytest.fixture
def stuck_task(toy_bundle, tmp_path):
    hold = tmp_path / "hold"
    (tmp_path / "stuck.py").write_text(PLUGIN.format(hold=str(hold)))
    world = load_world(toy_bundle)
    facts = {"toy20": WorldFacts(str(toy_bundle), world.world_hash, world.horizon_days)}
    agent = {"agent": f"{tmp_path / 'stuck.py'}:Stuck", "name": "stuck", "checkpoint_every": 1}
    spec = parse_spec({"worlds": [str(toy_bundle)], "agents": [agent], "seeds": [1], "days": 4, "timeout_s": 10})
    (task,) = plan(spec, tmp_path / "sweep", facts)
    return task, hold


@pytest.mark.slow  # about 15 s: the time limit, then the resume (tests/sweep/test_process.py pins the limit fast)
def test_a_run_over_the_time_limit_is_stopped_marked_and_resumed_next_time(stuck_task, tmp_path):
    """A plugin sleeping in act_day stalled its worker for good; now the run stops at timeout_s, resumable."""
    task, hold = stuck_task
    hold.write_text("sleep")
    t0 = time.monotonic()
    outcome = execute(task, Channel(topic="t", stop="s"))
    assert outcome.status == "timed_out" and 10 <= time.monotonic() - t0 < 10 + 10
    assert "over the spec's timeout_s of 10 s; it resumes from its last checkpoint" in (outcome.error or "")
    run_dir = Path(task.run_dir)
    assert json.loads((run_dir / TIMED_OUT_FILE).read_text())["timeout_s"] == 10
    assert folder_status(task) == ("unfinished", None)  # day 1's checkpoint is there
    row = read_result(task, tmp_path / "sweep")
    assert row is not None and (row.status, row.seed, row.days, row.net_assets) == ("timed out", 1, 4, None)
    hold.unlink()
    again = execute(task, Channel(topic="t", stop="s"))
    assert again.status == "ran" and again.resumed_from == 1
    assert not (run_dir / TIMED_OUT_FILE).exists()
    assert read_result(task, tmp_path / "sweep").status == "finished"


def test_a_run_whose_process_exits_is_blamed_by_name(stuck_task):
    """os._exit in a plugin killed the shared worker and another run was blamed; now the task names its own run."""
    task, hold = stuck_task
    hold.write_text("exit")
    with pytest.raises(RunProcessError, match=r"the process of run toy20/stuck-s1-d4 ended with exit code 3 before"):
        execute(task, Channel(topic="t", stop="s"))
    assert folder_status(task) == ("unfinished", None)  # this process (a worker's) is still here, and so is day 1


def test_a_run_that_forges_its_outcome_is_not_taken_as_finished(stuck_task):
    """The outcome line is the run's process's word: a folder without a finished run is not a run that ran."""
    task, hold = stuck_task
    hold.write_text("forge")
    with pytest.raises(RunProcessError, match="said it finished, but its folder holds no finished run"):
        execute(task, Channel(topic="t", stop="s"))

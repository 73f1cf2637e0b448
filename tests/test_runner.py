"""The runner: run folders, checkpoints after every day, resume after a crash gives the uninterrupted run."""

from __future__ import annotations

import dataclasses
import json
import pickle
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from autovend.agents.baseline import BaselineAgent
from autovend.agents.baseline.config import BaselineConfig
from autovend.errors import AgentError, CheckpointError, OutputExistsError
from autovend.provenance import PACKAGES, current_provenance
from autovend.rundir import default_run_dir
from autovend.runner import (
    CHECKPOINT_DIR,
    CHECKPOINT_FILE,
    Checkpointer,
    DayProgress,
    is_finished,
    read_checkpoint,
    run_episode,
)
from autovend.sim.records import RECORD_TABLES
from autovend.tools.trajectory import read_trajectory
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world

SMALL = BaselineConfig(starter_skus=12, n_skus=10)
DAYS = 16


@pytest.fixture(scope="module")
def world() -> World:
    """4 machines, 60 products, 20 days from 2025-01-01."""
    return toy_world(4, 60, seed=0, economics=Economics(horizon_days=20))


def baseline(seed: int = 1) -> BaselineAgent:
    return BaselineAgent(SMALL, seed=seed)


class Crash(Exception):
    """Stands for a crash (or Ctrl-C) in the middle of a day."""


class CrashingBaseline(BaselineAgent):
    """The baseline, which dies on day `crash_day` after a few calls of that day."""

    def __init__(self, crash_day: int) -> None:
        super().__init__(SMALL, seed=1)
        self.crash_day = crash_day

    def act_day(self, session) -> None:  # type: ignore[override]
        if session.day == self.crash_day:
            session.call("get_warehouse", {})
            session.call("query_sql", {"sql": "SELECT COUNT(*) FROM orders"})
            raise Crash
        super().act_day(session)


def calls(run_dir: Path) -> list[dict[str, Any]]:
    """The trajectory without wall times (wall_ms, query_sql's elapsed_ms)."""
    out = []
    for rec in read_trajectory(run_dir / "trajectory.jsonl"):
        rec.pop("wall_ms", None)
        if isinstance(rec.get("result"), dict):
            rec["result"].pop("elapsed_ms", None)
        out.append(rec)
    return out


def tables(path: Path) -> dict[str, pd.DataFrame]:
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {n: pd.read_sql_query(f"SELECT * FROM {n}", conn) for n in names}


def assert_same_run(a: Path, b: Path) -> None:
    """Same records, hidden log, daily ledger and calls; run.json equal but for times and resume facts."""
    for name in ("records.sqlite", "hidden.sqlite"):
        ta, tb = tables(a / name), tables(b / name)
        assert ta.keys() == tb.keys()
        for t in ta:
            pd.testing.assert_frame_equal(ta[t], tb[t], check_exact=True, obj=f"{name}:{t}")
    assert (a / "daily.csv").read_bytes() == (b / "daily.csv").read_bytes()
    assert calls(a) == calls(b)
    ma, mb = (json.loads((d / "run.json").read_text()) for d in (a, b))
    for m in (ma, mb):
        for key in ("wall_time_s", "resumed_from_day", "checkpoints", "evaluated"):  # evaluated: with a report or not
            m.pop(key)
    assert ma == mb


@pytest.fixture(scope="module")
def uninterrupted(world, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "full"
    summary = run_episode(world, baseline(), seed=1, days=DAYS, out_dir=out, checkpoint="sync", evaluate=False)
    assert summary.days == DAYS and summary.resumed_from is None
    return out


def test_run_folder_contents(uninterrupted):
    names = {p.name for p in uninterrupted.iterdir()}
    assert {"run.json", "trajectory.jsonl", "records.sqlite", "hidden.sqlite", "daily.csv"} <= names
    assert CHECKPOINT_DIR not in names  # a finished run keeps no checkpoint
    meta = json.loads((uninterrupted / "run.json").read_text())
    assert meta["finished"] is True and meta["agent"] == "baseline" and meta["seed"] == 1
    assert meta["days"] == DAYS and meta["days_requested"] == DAYS
    assert meta["agent_config"]["n_skus"] == 10
    assert meta["checkpoints"] == {"mode": "sync", "written": DAYS, "skipped": 0}
    daily = pd.read_csv(uninterrupted / "daily.csv")
    assert daily["day"].tolist() == list(range(1, DAYS + 1))
    assert is_finished(uninterrupted)


@pytest.mark.parametrize("crash_day", [pytest.param(1, id="first-day"), pytest.param(9, id="mid-run")])
def test_resume_after_a_crash_is_the_uninterrupted_run(world, tmp_path, uninterrupted, crash_day):
    out = tmp_path / "crashed"
    with pytest.raises(Crash):
        run_episode(
            world, CrashingBaseline(crash_day), seed=1, days=DAYS, out_dir=out, checkpoint="sync", evaluate=False
        )
    ckpt = out / CHECKPOINT_DIR / CHECKPOINT_FILE
    if crash_day == 1:
        assert not ckpt.exists()  # nothing was completed: resume starts afresh
    else:
        assert read_checkpoint(ckpt)["day"] == crash_day - 1
        last = read_trajectory(out / "trajectory.jsonl")[-1]
        assert last["day"] == crash_day and last["tool"] == "query_sql"  # the partial day is on disk
    summary = run_episode(
        world, baseline(), seed=1, days=DAYS, out_dir=out, resume=True, checkpoint="sync", evaluate=False
    )
    assert summary.resumed_from == (None if crash_day == 1 else crash_day - 1)
    assert_same_run(out, uninterrupted)


def test_background_checkpoints_resume_identically(world, tmp_path, uninterrupted):
    """Checkpoints written by forked children; Ctrl-C after day 11; resume from the last snapshot written."""
    out = tmp_path / "bg"

    def stop(p: DayProgress) -> None:
        if p.day == 11:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_episode(world, baseline(), seed=1, days=DAYS, out_dir=out, progress=stop, evaluate=False)
    day = read_checkpoint(out / CHECKPOINT_DIR / CHECKPOINT_FILE)["day"]
    assert 1 <= day <= 11
    summary = run_episode(world, baseline(), seed=1, days=DAYS, out_dir=out, resume=True, evaluate=False)
    assert summary.resumed_from == day
    assert_same_run(out, uninterrupted)


def test_checkpoints_every_fifth_day_resume_from_the_last_multiple(world, tmp_path, uninterrupted):
    """checkpoint_every=5: a crash on day 13 resumes from day 10 (days 11-12 are played again)."""
    out = tmp_path / "every5"
    with pytest.raises(Crash):
        run_episode(
            world,
            CrashingBaseline(13),
            seed=1,
            days=DAYS,
            out_dir=out,
            checkpoint="sync",
            evaluate=False,
            checkpoint_every=5,
        )
    assert read_checkpoint(out / CHECKPOINT_DIR / CHECKPOINT_FILE)["day"] == 10
    summary = run_episode(
        world, baseline(), seed=1, days=DAYS, out_dir=out, resume=True, checkpoint="sync", checkpoint_every=5
    )
    assert summary.resumed_from == 10 and summary.checkpoints_written == 1  # day 15 only, of days 11-16
    assert_same_run(out, uninterrupted)
    with pytest.raises(ValueError, match="checkpoint_every must be at least 1, got 0"):
        run_episode(world, baseline(), seed=1, days=2, out_dir=tmp_path / "zero", checkpoint_every=0)


def test_checkpointer_skips_while_a_snapshot_is_being_written(tmp_path):
    import time

    ck = Checkpointer(tmp_path / "c.pkl", "background")
    if ck.mode != "background":
        pytest.skip("no fork on this system")

    def slow(path: Path) -> None:
        time.sleep(0.5)
        path.write_bytes(b"x")

    assert ck.save(1, slow) is True
    assert ck.save(2, slow) is False  # the first child is still writing
    ck.wait()
    assert (ck.written, ck.skipped, ck.last_day) == (1, 1, 1)
    assert (tmp_path / "c.pkl").read_bytes() == b"x"

    def broken(path: Path) -> None:
        raise OSError("disk full")

    assert ck.save(3, broken) is True
    ck.wait()
    assert (ck.written, ck.last_day) == (1, 1)  # a failed snapshot does not count


def test_refuses_to_overwrite_without_force(world, tmp_path, uninterrupted):
    with pytest.raises(OutputExistsError, match="finished run.*--force"):
        run_episode(world, baseline(), seed=1, days=DAYS, out_dir=uninterrupted, evaluate=False)
    with pytest.raises(OutputExistsError, match="finished run"):
        run_episode(world, baseline(), seed=1, days=DAYS, out_dir=uninterrupted, resume=True, evaluate=False)
    other = tmp_path / "other"
    other.mkdir()
    (other / "trajectory.jsonl").write_text("{}\n")
    with pytest.raises(OutputExistsError, match="already holds run files"):
        run_episode(world, baseline(), seed=1, days=3, out_dir=other, evaluate=False)
    (other / "notes.txt").write_text("mine")
    summary = run_episode(
        world, baseline(), seed=1, days=3, out_dir=other, force=True, checkpoint="off", evaluate=False
    )
    assert summary.days == 3
    assert (other / "notes.txt").read_text() == "mine"  # --force removes only a run's own files


def test_unfinished_run_needs_resume_and_the_same_seed(world, tmp_path):
    out = tmp_path / "half"
    with pytest.raises(Crash):
        run_episode(world, CrashingBaseline(5), seed=1, days=DAYS, out_dir=out, checkpoint="sync", evaluate=False)
    with pytest.raises(OutputExistsError, match="unfinished run \\(checkpoint of day 4\\).*--resume"):
        run_episode(world, baseline(), seed=1, days=DAYS, out_dir=out, evaluate=False)
    with pytest.raises(CheckpointError, match="seed 1 \\(now 2\\)"):
        run_episode(world, baseline(2), seed=2, days=DAYS, out_dir=out, resume=True, evaluate=False)


def test_an_agent_must_end_its_day(world, tmp_path):
    class Idle(BaselineAgent):
        def act_day(self, session) -> None:  # type: ignore[override]
            session.call("get_warehouse", {})

    with pytest.raises(AgentError, match="returned from act_day\\(\\) without ending day 1"):
        run_episode(world, Idle(SMALL), seed=1, days=3, out_dir=tmp_path / "idle", checkpoint="off", evaluate=False)


class Hold:
    """A minimal custom agent: it ends every day without acting."""

    name = "hold"

    def start(self, session) -> None:
        pass

    def act_day(self, session) -> None:
        session.call("end_day", {})

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        pass


def test_a_run_without_world_path_can_be_reloaded_and_compared(world, tmp_path):
    from autovend.evaluation import RunData
    from autovend.evaluation.comparability import check_comparable
    from autovend.world.bundle import content_hashes, world_hash

    assert world.world_hash == ""  # built in memory: the folder keeps a copy, run.json its content hash
    runs = []
    for seed in (1, 2):
        out = tmp_path / f"hold-s{seed}"
        run_episode(world, Hold(), seed=seed, days=3, out_dir=out, checkpoint="off", evaluate=False)
        assert json.loads((out / "run.json").read_text())["world_path"] is None
        assert (out / "world" / "manifest.json").is_file() and not (out / "world.pkl").exists()
        runs.append(RunData.load(out))  # no world given: it comes from the folder's world/ bundle
    assert [r.world_hash for r in runs] == [world_hash(content_hashes(world))] * 2
    assert [r.final_net_assets for r in runs] == [40_000 - 3 * 16.0] * 2  # 4 machines x 4 a day, nothing else
    assert check_comparable(runs).comparable
    # given its bundle folder, the run points there instead of copying the world
    bundled = dataclasses.replace(world, world_hash="ab" * 32)  # stands for a world loaded from a bundle
    out = tmp_path / "with-path"
    run_episode(bundled, Hold(), seed=1, days=1, out_dir=out, checkpoint="off", evaluate=False, world_path="w")
    assert not (out / "world").exists() and not (out / "world.pkl").exists()
    # --force clears the copy a run wrote with the rest of its files
    run_episode(world, Hold(), seed=1, days=1, out_dir=out, checkpoint="off", evaluate=False, force=True)
    assert (out / "world" / "manifest.json").is_file()


def test_the_default_run_folder_holds_the_world_name(world, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    summary = run_episode(world, baseline(), seed=3, days=1, checkpoint="off", evaluate=False)
    assert summary.run_dir == Path("runs") / world.name / "baseline-s3" and (summary.run_dir / "run.json").exists()
    assert default_run_dir("cn20", "baseline", 1) == Path("runs/cn20/baseline-s1")
    assert default_run_dir("my world", "openai:org/model:7b", 2) == Path("runs/my-world/openai-org-model-7b-s2")
    assert default_run_dir("..", "a", 1) == Path("runs/x/a-s1")  # never a folder above runs/


def test_progress_and_days(world, tmp_path):
    seen: list[DayProgress] = []
    summary = run_episode(
        world,
        baseline(),
        seed=1,
        days=4,
        out_dir=tmp_path / "p",
        progress=seen.append,
        checkpoint="off",
        evaluate=False,
    )
    assert [p.day for p in seen] == [1, 2, 3, 4]
    assert all(p.days == 4 for p in seen)
    assert seen[-1].net_assets == pytest.approx(summary.final_net_assets)
    with pytest.raises(ValueError, match="between 1 and the world's horizon 20"):
        run_episode(world, baseline(), seed=1, days=21, out_dir=tmp_path / "q", evaluate=False)


def test_evaluated_run_writes_metrics_and_report(world, tmp_path):
    out = tmp_path / "eval"
    summary = run_episode(world, baseline(), seed=1, days=DAYS, out_dir=out, checkpoint="off")
    assert summary.metrics is not None
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["net_assets"] == pytest.approx(summary.final_net_assets)
    assert (out / "report.md").read_text().startswith("#")
    assert (out / "net_assets.png").exists()
    assert is_finished(out)


def test_checkpoint_holds_session_agent_and_trajectory_length(world, tmp_path):
    out = tmp_path / "ck"
    with pytest.raises(Crash):
        run_episode(world, CrashingBaseline(6), seed=1, days=DAYS, out_dir=out, checkpoint="sync", evaluate=False)
    payload = read_checkpoint(out / CHECKPOINT_DIR / CHECKPOINT_FILE)
    assert payload["agent"] == "baseline" and payload["seed"] == 1 and payload["day"] == 5
    assert pickle.loads(payload["agent_state"])["state"]["day_done"] == 5
    head = (out / "trajectory.jsonl").read_bytes()[: payload["trajectory_bytes"]]
    last = json.loads(head.splitlines()[-1])
    assert last["tool"] == "end_day" and last["day"] == 5
    bad = out / CHECKPOINT_DIR / CHECKPOINT_FILE
    bad.write_bytes(pickle.dumps({"format": "something else"}))
    with pytest.raises(CheckpointError, match="not an AutoVend run checkpoint"):
        read_checkpoint(bad)


def test_record_tables_are_all_saved(uninterrupted):
    saved = tables(uninterrupted / "records.sqlite")
    assert {t.name for t in RECORD_TABLES} <= set(saved)


def test_run_folder_records_versions_and_cpu_features(uninterrupted):
    meta = json.loads((uninterrupted / "run.json").read_text())
    # a world built in memory is recorded by its content hash, the hash its copy in the folder has
    assert meta["world_hash"] == json.loads((uninterrupted / "world" / "manifest.json").read_text())["world_hash"]
    record = meta["provenance"]
    assert record == current_provenance().to_json()
    assert list(record["packages"]) == list(PACKAGES) and record["packages"]["numpy"] == np.__version__
    assert record["cpu_features"] == sorted(record["cpu_features"]) and len(record["cpu_features"]) > 0
    assert meta["provenance_changes"] == []


def _elsewhere(numpy_version: str):
    """A stand-in for `current_provenance` on a machine with another numpy."""
    here = current_provenance()
    return lambda: dataclasses.replace(here, packages={**here.packages, "numpy": numpy_version})


def test_a_resume_on_another_stack_keeps_the_first_record_and_says_so(world, tmp_path, monkeypatch, caplog):
    out = tmp_path / "moved"
    first = current_provenance().to_json()
    with pytest.raises(Crash):
        run_episode(world, CrashingBaseline(5), seed=1, days=DAYS, out_dir=out, checkpoint="sync", evaluate=False)
    monkeypatch.setattr("autovend.runner.current_provenance", _elsewhere("9.0.0"))
    with pytest.raises(Crash):  # resumed from day 4 on numpy 9.0.0, stops again on day 9
        run_episode(
            world, CrashingBaseline(9), seed=1, days=DAYS, out_dir=out, resume=True, checkpoint="sync", evaluate=False
        )
    assert read_checkpoint(out / CHECKPOINT_DIR / CHECKPOINT_FILE)["provenance"] == first
    monkeypatch.setattr("autovend.runner.current_provenance", _elsewhere("9.1.0"))
    with caplog.at_level("WARNING", logger="autovend.runner"):
        summary = run_episode(
            world, baseline(), seed=1, days=DAYS, out_dir=out, resume=True, checkpoint="sync", evaluate=False
        )
    assert summary.resumed_from == 8 and summary.days == DAYS
    meta = json.loads((out / "run.json").read_text())
    assert meta["provenance"] == first  # the record of the session that started the run
    changes = meta["provenance_changes"]
    assert [(c["resumed_from_day"], c["differences"]) for c in changes] == [
        (4, [f"numpy {np.__version__} -> 9.0.0"]),
        (8, [f"numpy {np.__version__} -> 9.1.0"]),
    ]
    assert changes[1]["warning"] == (
        f"resumed from day 8 with another stack: numpy {np.__version__} -> 9.1.0; days 9+ ran with it"
    )
    assert "resumed from day 8 with another stack" in caplog.text


def test_a_checkpoint_without_a_provenance_record_is_resumed_and_marked(world, tmp_path):
    out = tmp_path / "old"
    with pytest.raises(Crash):
        run_episode(world, CrashingBaseline(5), seed=1, days=8, out_dir=out, checkpoint="sync", evaluate=False)
    path = out / CHECKPOINT_DIR / CHECKPOINT_FILE
    payload = read_checkpoint(path)
    del payload["provenance"], payload["provenance_changes"]  # as written before provenance was recorded
    path.write_bytes(pickle.dumps(payload))
    run_episode(world, baseline(), seed=1, days=8, out_dir=out, resume=True, checkpoint="off", evaluate=False)
    meta = json.loads((out / "run.json").read_text())
    assert meta["provenance"] == current_provenance().to_json()
    assert meta["provenance_changes"] == [
        {
            "resumed_from_day": 4,
            "differences": ["days 1-4 ran on a stack that was not recorded"],
            "warning": "resumed from day 4; days 1-4 ran on a stack that was not recorded (the record is that of days 5+)",
        }
    ]


class _Planted:
    """A hostile object: unpickling it would write `target` (a shell command would be as easy)."""

    def __init__(self, target: Path) -> None:
        self.target = target

    def __reduce__(self) -> tuple[Any, tuple[str, str]]:
        return (Path.write_text, (str(self.target), "ran"))


def _plant(data: bytes, where: tuple[str, ...], planted: Any) -> bytes:
    """The pickle `data` with `planted` put at the end of the nesting `where` (each level a pickled dict's key)."""
    payload = pickle.loads(data)
    if len(where) == 1:
        payload[where[0]] = planted
    else:
        payload[where[0]] = _plant(payload[where[0]], where[1:], planted)
    return pickle.dumps(payload)


@pytest.mark.parametrize(
    "where",
    [("format",), ("agent_state", "seed"), ("session", "notebook"), ("session", "sim", "state")],
    ids=["checkpoint", "agent-state", "session", "simulator"],
)
def test_a_checkpoint_that_names_code_is_refused_before_it_runs(world, tmp_path, where):
    """Checkpoints are read with an allow-list: plain values, numpy, the simulator's state classes, nothing else."""
    out = tmp_path / "crashed"
    with pytest.raises(Crash):
        run_episode(world, CrashingBaseline(4), seed=1, days=DAYS, out_dir=out, checkpoint="sync", evaluate=False)
    ckpt = out / CHECKPOINT_DIR / CHECKPOINT_FILE
    assert read_checkpoint(ckpt)["day"] == 3  # a checkpoint this code wrote reads back
    marker = tmp_path / "marker.txt"
    ckpt.write_bytes(_plant(ckpt.read_bytes(), where, _Planted(marker)))
    with pytest.raises(CheckpointError, match=r"refused to load the .* it names pathlib\.Path"):
        run_episode(world, baseline(), seed=1, days=DAYS, out_dir=out, resume=True, checkpoint="sync", evaluate=False)
    assert not marker.exists()


def test_an_agent_state_may_hold_plain_values_and_numpy_only():
    import collections
    import datetime as dt

    from autovend.io import load_pickle_bytes

    plain = {"a": [1, 2.5, "x", None], "b": {1, 2}, "c": frozenset({3}), "d": np.arange(3), "e": np.float64(2.0)}
    plain |= {"f": dt.date(2025, 1, 2), "g": collections.OrderedDict(x=1), "h": np.random.default_rng(3)}
    back = load_pickle_bytes(pickle.dumps(plain))
    assert back["a"] == plain["a"] and back["b"] == {1, 2} and back["d"].tolist() == [0, 1, 2]
    assert back["h"].integers(1000) == np.random.default_rng(3).integers(1000)
    with pytest.raises(pickle.UnpicklingError, match="names tests.test_runner.Hold"):
        load_pickle_bytes(pickle.dumps({"agent": Hold()}))
    # the classes of a module named (the agent's own), never its functions
    assert isinstance(
        load_pickle_bytes(pickle.dumps({"agent": Hold()}), class_modules=("tests.test_runner",))["agent"], Hold
    )
    with pytest.raises(pickle.UnpicklingError, match="names tests.test_runner.baseline"):
        load_pickle_bytes(pickle.dumps(baseline), class_modules=("tests.test_runner",))

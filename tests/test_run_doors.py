"""The run's doors under hostile use: agents that break the protocol, two writers of one folder, Ctrl-C, odd folders."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from autovend.agents.baseline import BaselineAgent
from autovend.agents.baseline.config import BaselineConfig
from autovend.errors import AgentError, OutputExistsError, RunFolderBusyError
from autovend.runlock import LOCK_FILE, hold_run_folder
from autovend.runner import CHECKPOINT_DIR, CHECKPOINT_FILE, TRAJECTORY_FILE, read_checkpoint, run_episode
from autovend.tools import sql_worker
from autovend.tools.trajectory import read_trajectory
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world

ROOT = Path(__file__).resolve().parents[1]
SMALL = BaselineConfig(starter_skus=12, n_skus=10)
WORLD = "toy_world(4, 60, seed=0, economics=Economics(horizon_days=20))"


@pytest.fixture(scope="module")
def world() -> World:
    return toy_world(4, 60, seed=0, economics=Economics(horizon_days=20))


class Misbehaving(BaselineAgent):
    """The baseline, which on `day` does what `how` says instead of its day."""

    def __init__(self, how: str, day: int = 2) -> None:
        super().__init__(SMALL, seed=1)
        self.how, self.day = how, day

    def start(self, session: Any) -> None:
        super().start(session)
        if self.how == "end-in-start":
            session.call("end_day", {})

    def act_day(self, session: Any) -> None:
        if session.day != self.day:
            return super().act_day(session)
        if self.how == "no-end":
            session.call("get_warehouse", {})
        elif self.how == "twice":
            session.call("end_day", {})
            with contextlib.suppress(Exception):  # an agent that swallows the refusal is stopped all the same
                session.call("end_day", {})
        elif self.how == "exit":
            sys.exit(0)


@pytest.mark.parametrize(
    ("how", "match"),
    [
        ("no-end", r"agent 'baseline' returned from act_day\(\) without ending day 2"),
        ("twice", r"agent 'baseline' called end_day a second time in one act_day \(day 2 was already ended\)"),
        ("exit", r"agent 'baseline' called sys\.exit\(0\) in act_day\(\) on day 2"),
        ("end-in-start", r"agent 'baseline' called end_day in start\(\), before day 1"),
    ],
)
def test_an_agent_that_breaks_the_protocol_stops_the_run_with_a_message(
    world: World, tmp_path: Path, how: str, match: str
) -> None:
    out = tmp_path / "run"
    with pytest.raises(AgentError, match=match + r".*--resume"):
        run_episode(world, Misbehaving(how), seed=1, days=4, out_dir=out, checkpoint="sync", evaluate=False)
    ends = [c for c in read_trajectory(out / TRAJECTORY_FILE) if c.get("tool") == "end_day"]
    if how != "end-in-start":
        assert [c["day"] for c in ends] == [1, 2] if how == "twice" else [1]  # the second end_day never ran
        assert read_checkpoint(out / CHECKPOINT_DIR / CHECKPOINT_FILE)["day"] == 1  # kept for --resume
        summary = run_episode(world, BaselineAgent(SMALL, seed=1), seed=1, days=4, out_dir=out, resume=True)
        assert summary.days == 4 and summary.resumed_from == 1
    else:
        assert ends == []
    assert not (out / LOCK_FILE).exists()


_CHILD = """
import sys
from autovend.agents.baseline import BaselineAgent
from autovend.agents.baseline.config import BaselineConfig
from autovend.runner import run_episode
from autovend.world.model import Economics
from autovend.world.toy import toy_world

class Waiting(BaselineAgent):
    def act_day(self, session):
        if session.day == 2:
            print("writing", flush=True)
            sys.stdin.readline()
        super().act_day(session)

run_episode({world}, Waiting(BaselineConfig(starter_skus=12, n_skus=10), seed=1), seed=1, days=4,
            out_dir=sys.argv[1], checkpoint="sync", evaluate=False)
"""


def test_a_second_writer_of_a_run_folder_is_refused_while_the_first_writes(world: World, tmp_path: Path) -> None:
    out = tmp_path / "run"
    script = _CHILD.format(world=WORLD)
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline() == "writing\n"  # day 1 is checkpointed, day 2 under way
        before = (out / TRAJECTORY_FILE).read_bytes()
        with pytest.raises(RunFolderBusyError, match=rf"is being written by process {child.pid} .*--resume"):
            run_episode(world, BaselineAgent(SMALL, seed=1), seed=1, days=4, out_dir=out, resume=True)
        assert (out / TRAJECTORY_FILE).read_bytes() == before
        child.stdin.write("\n")
        child.stdin.close()
        assert child.wait(timeout=120) == 0
    finally:
        child.kill()
        child.wait()
    assert json.loads((out / "run.json").read_text())["finished"] is True
    assert not (out / LOCK_FILE).exists()


def test_a_lock_left_by_a_killed_process_is_reported_and_taken_over(
    world: World, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "run"
    out.mkdir()
    hold = (
        f"from autovend.runlock import hold_run_folder\nwith hold_run_folder({str(out)!r}):\n    import os; os._exit(9)"
    )
    dead = subprocess.run([sys.executable, "-c", hold], check=False)
    assert dead.returncode == 9 and (out / LOCK_FILE).exists()
    with caplog.at_level(logging.WARNING, logger="autovend.runner"):
        run_episode(world, BaselineAgent(SMALL, seed=1), seed=1, days=2, out_dir=out, evaluate=False)
    assert any("left .autovend-run.lock behind (no longer running)" in r.getMessage() for r in caplog.records)
    assert not (out / LOCK_FILE).exists()


def test_the_same_process_cannot_write_a_folder_twice(world: World, tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    with hold_run_folder(out), pytest.raises(RunFolderBusyError, match=f"process {os.getpid()}"):
        run_episode(world, BaselineAgent(SMALL, seed=1), seed=1, days=2, out_dir=out, evaluate=False)
    assert sorted(p.name for p in out.iterdir()) == []


def test_resume_without_a_checkpoint_never_deletes_files_it_did_not_write(world: World, tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "report.md").write_text("my notes\n", encoding="utf-8")
    with pytest.raises(OutputExistsError, match=r"already holds run files \(report\.md\).*--force"):
        run_episode(world, BaselineAgent(SMALL, seed=1), seed=1, days=2, out_dir=out, resume=True)
    assert (out / "report.md").read_text(encoding="utf-8") == "my notes\n"


def test_a_run_folder_that_is_a_file_is_refused(world: World, tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.write_text("x", encoding="utf-8")
    with pytest.raises(OutputExistsError, match="is a file, not a run folder"):
        run_episode(world, BaselineAgent(SMALL, seed=1), seed=1, days=2, out_dir=out)
    assert out.read_text(encoding="utf-8") == "x"


def test_the_query_process_ignores_ctrl_c_and_ends_quietly_with_its_parent() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-I", sql_worker.__file__],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (x)")
    sql_worker.send_frame(proc.stdin, ("load",), db.serialize())
    assert sql_worker.read_frame(proc.stdout) == (("loaded",), b"")  # serving: past its start
    proc.send_signal(signal.SIGINT)  # what Ctrl-C sends to every process of the terminal's group
    sql_worker.send_frame(proc.stdin, ("query", "SELECT 1", 5.0, 10))
    assert sql_worker.read_frame(proc.stdout) == (("rows", ("1",), ((1,),), False, 0), b"")
    proc.stdin.close()
    assert proc.wait(timeout=60) == 0
    assert proc.stderr.read() == b""


_CTRL_C_AGENT = """
import os, signal
from autovend.agents.baseline import BaselineAgent
from autovend.agents.baseline.config import BaselineConfig

class CtrlC(BaselineAgent):
    name = "ctrlc"

    def __init__(self, seed):
        super().__init__(BaselineConfig(starter_skus=12, n_skus=10), seed=seed)

    def act_day(self, session):
        session.call("query_sql", {"sql": "SELECT COUNT(*) FROM orders"})
        if session.day == 3 and os.environ.get("AUTOVEND_TEST_CTRL_C"):
            os.killpg(os.getpgid(0), signal.SIGINT)  # Ctrl-C in a terminal: the whole group, SQL worker too
        super().act_day(session)
"""


@pytest.mark.slow
def test_ctrl_c_prints_one_message_exits_130_and_keeps_the_checkpoint(tmp_path: Path) -> None:
    (tmp_path / "ctrlc.py").write_text(textwrap.dedent(_CTRL_C_AGENT), encoding="utf-8")
    world = ROOT / "worlds" / "cn20"
    args = [sys.executable, "-m", "autovend.cli", "run", "--world", str(world), "--agent", "ctrlc.py:CtrlC"]
    args += ["--days", "5", "--out", "run", "--checkpoint", "sync", "--no-report"]
    env = {**os.environ, "AUTOVEND_TEST_CTRL_C": "1", "COLUMNS": "200"}
    # Ctrl-C as a terminal has it: a suite started in the background by a shell without job control (`make test &`
    # in a script) hands its children SIGINT ignored, and Python then installs no handler for it
    first = subprocess.run(
        args,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert first.returncode == 130, first.stderr
    assert "Traceback" not in first.stderr and "KeyboardInterrupt" not in first.stderr, first.stderr
    assert "interrupted after day 2; continue with: autovend run" in " ".join(first.stdout.split())
    assert read_checkpoint(tmp_path / "run" / CHECKPOINT_DIR / CHECKPOINT_FILE)["day"] == 2
    env.pop("AUTOVEND_TEST_CTRL_C")
    again = subprocess.run([*args, "--resume"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert "(resumed from day 2)" in again.stdout


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--days", "1000000000"], r"--days 1000000000 is longer than the world's horizon \(20 days\)"),
        (["--agent", "openai:m", "--base-url", "http://[::1"], r"--base-url 'http://\[::1' is not a URL"),
        (["--agent", "openai:m", "--base-url", "http://h:99999/v1"], r"is not a URL \(Port out of range"),
        (["--agent", "openai:m", "--base-url", "ftp://h"], r"is not an http\(s\) URL with a host"),
    ],
)
def test_run_options_that_cannot_work_exit_2_with_a_message(
    args: list[str], match: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from autovend.cli import main
    from autovend.world.bundle import make_manifest, world_files, write_bundle

    w = toy_world(4, 60, seed=0, economics=Economics(horizon_days=20))
    files = world_files(w)
    files["README.md"] = b"# toy\n"
    write_bundle(tmp_path / "w", files, make_manifest(w, files, "toy", "toy", {}))
    monkeypatch.setattr(sys, "argv", ["autovend", "run", "--world", str(tmp_path / "w"), "--out", str(tmp_path / "r")])
    monkeypatch.setattr(sys, "argv", [*sys.argv, *args])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    import re

    assert re.search(match, " ".join(capsys.readouterr().err.split()))
    assert not (tmp_path / "r").exists()

"""Whole sweeps with a hostile plugin: a run stuck in act_day, one that calls os._exit, and Ctrl-C.

Each stuck or dying run is seed 2's; seeds 1 and 3 are ordinary. Before, the stuck run stalled the sweep for good
(no time limit), Ctrl-C did not stop it, and os._exit killed a shared worker so that Dask blamed another run.
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from autovend.runner import is_finished
from autovend.sweep import parse_spec, run_sweep

pytestmark = pytest.mark.slow  # whole sweeps on local clusters

PLUGIN = '''
import os, time


class Hostile:
    """Seed 2 misbehaves on day 2 as MODE says: sleep (stuck in act_day) or exit (os._exit(3))."""

    name = "hostile"
    MODE = {mode!r}

    def __init__(self, seed=0):
        self.seed = seed

    def start(self, session):
        pass

    def act_day(self, session):
        if session.day == 2 and self.seed == 2:
            if self.MODE == "exit":
                os._exit(3)
            time.sleep(600)
        session.call("end_day", {{}})

    def state_dict(self):
        return {{}}

    def load_state(self, state):
        pass
'''


def _spec(tmp_path: Path, world: Path, mode: str, **extra) -> dict:
    plugin = tmp_path / f"hostile_{mode}.py"
    plugin.write_text(PLUGIN.format(mode=mode))
    agent = {"agent": f"{plugin}:Hostile", "name": "hostile", "checkpoint_every": 1}
    return {"worlds": [str(world)], "agents": [agent], "seeds": [1, 2, 3], "days": 3, **extra}


def _rows(out: Path) -> list[dict[str, str]]:
    with (out / "results.csv").open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_a_stuck_run_times_out_and_the_others_finish(toy_bundle, tmp_path):
    out = tmp_path / "sweep"
    t0 = time.monotonic()
    outcome = run_sweep(parse_spec(_spec(tmp_path, toy_bundle, "sleep", timeout_s=30)), out, workers=2)
    assert time.monotonic() - t0 < 300
    assert sorted(outcome.ran) == ["toy20/hostile-s1-d3", "toy20/hostile-s3-d3"]
    assert list(outcome.timed_out) == ["toy20/hostile-s2-d3"] and not outcome.failures
    rows = _rows(out)
    assert [(r["seed"], r["status"]) for r in rows] == [("1", "finished"), ("2", "timed out"), ("3", "finished")]
    assert rows[1]["net_assets"] == "" and rows[1]["run_dir"] == "runs/toy20/hostile-s2-d3"
    board = (out / "leaderboard.md").read_text()
    assert "- toy20/hostile-s2-d3 (timed out: stopped after" in board


def test_a_run_that_calls_os_exit_is_the_one_that_fails(toy_bundle, tmp_path):
    out = tmp_path / "sweep"
    outcome = run_sweep(parse_spec(_spec(tmp_path, toy_bundle, "exit")), out, workers=2, retries=1)
    assert sorted(outcome.ran) == ["toy20/hostile-s1-d3", "toy20/hostile-s3-d3"]
    assert list(outcome.failures) == ["toy20/hostile-s2-d3"]
    assert "the process of run toy20/hostile-s2-d3 ended with exit code 3" in outcome.failures["toy20/hostile-s2-d3"]
    assert [r["seed"] for r in _rows(out)] == ["1", "3"]


def test_ctrl_c_stops_the_sweep_within_seconds_and_keeps_what_finished(toy_bundle, tmp_path):
    """SIGINT to the command's process group, as a terminal's Ctrl-C: exit 130, the finished runs in results.csv."""
    spec = tmp_path / "sweep.yaml"
    spec.write_text(yaml.safe_dump(_spec(tmp_path, toy_bundle, "sleep")))
    out = tmp_path / "sweep"
    cmd = [sys.executable, "-m", "autovend.cli", "sweep", str(spec), "--out", str(out), "--workers", "2"]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    runs = out / "runs" / "toy20"
    try:
        deadline = time.monotonic() + 300
        done = [runs / f"hostile-s{s}-d3" for s in (1, 3)]
        stuck = runs / "hostile-s2-d3" / "checkpoint" / "checkpoint.pkl"
        while not (all(is_finished(p) for p in done) and stuck.exists()) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
            time.sleep(0.2)
        time.sleep(1.0)
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        code = proc.wait(timeout=60)
        seconds = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    text = proc.stdout.read().decode() if proc.stdout else ""
    assert code == 130, text
    assert seconds < 20, f"{seconds:.1f} s"
    assert "interrupted; run the same command again" in " ".join(text.split())
    assert [(r["seed"], r["status"]) for r in _rows(out)] == [("1", "finished"), ("3", "finished")]
    assert stuck.exists()  # the stopped run resumes from day 1 next time
    left = subprocess.run(["pgrep", "-f", "autovend.sweep.child"], capture_output=True, text=True).stdout.split()
    assert not [p for p in left if str(out) in Path(f"/proc/{p}/cmdline").read_text(errors="replace")]

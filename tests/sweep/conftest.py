"""Shared pieces of the sweep tests: a small world bundle on disk, `autovend run` references, a Dask cluster by hand.

`DaskCluster` starts `dask scheduler` and `dask worker` processes on 127.0.0.1 (one thread each, no
nanny, so killing a worker's process kills the worker) in their own process groups, and ends them
by their ids when the test ends, passed or failed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import autovend
from autovend.cli import app
from autovend.world.bundle import make_manifest, world_files, write_bundle
from autovend.world.model import Economics
from autovend.world.toy import toy_world

DASK = str(Path(sys.executable).with_name("dask"))
# the leases of a lost worker expire after this (default 30 s); the same setting on scheduler and workers
LEASE_ENV = {
    "DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_TIMEOUT": "3s",
    "DASK_DISTRIBUTED__SCHEDULER__LOCKS__LEASE_VALIDATION_INTERVAL": "1s",
}
TIMING_KEYS = ("wall_ms", "elapsed_ms")


@pytest.fixture(scope="session")
def toy_bundle(tmp_path_factory) -> Path:
    """A 20-machine, 60-product toy world with a 30-day horizon, exported as a bundle."""
    world = toy_world(20, 60, seed=0, economics=Economics(horizon_days=30))
    files = world_files(world)
    files["README.md"] = b"# toy world for the sweep tests\n"
    out = tmp_path_factory.mktemp("worlds") / "toy20"
    write_bundle(out, files, make_manifest(world, files, "toy", "toy", {}))
    return out


def autovend_run(world: Path, seed: int, days: int, out: Path) -> Path:
    """`autovend run` of the baseline (the reference a sweep's run must equal)."""
    args = ["run", "--world", str(world), "--seed", str(seed), "--days", str(days), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return out


def _without_timings(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _without_timings(v) for k, v in obj.items() if k not in TIMING_KEYS}
    if isinstance(obj, list):
        return [_without_timings(v) for v in obj]
    return obj


def trajectory(run_dir: Path) -> list[Any]:
    """The run's tool calls without their wall times (the only part that differs between equal runs)."""
    lines = (run_dir / "trajectory.jsonl").read_text(encoding="utf-8").splitlines()
    return [_without_timings(json.loads(line)) for line in lines]


def metrics(run_dir: Path) -> dict[str, Any]:
    """metrics.json without the run's name (its folder's name)."""
    data = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    data["run"].pop("name")
    return data


def run_json(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "run.json").read_text(encoding="utf-8"))


class DaskCluster:
    """A scheduler and workers started by hand on 127.0.0.1 (see the module docstring)."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.env = {**os.environ, **LEASE_ENV}
        # the workers import the autovend this test imports (a worktree's, not another checkout's installed copy)
        here = str(Path(autovend.__file__).resolve().parents[1])
        self.env["PYTHONPATH"] = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH", "")) if p)
        self.scheduler_file = base / "scheduler.json"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.address = ""

    def start(self, n_workers: int) -> DaskCluster:
        """Start the scheduler and `n_workers` workers named w0, w1, ..."""
        # --idle-timeout and the workers' --death-timeout end them by themselves should this process die first
        cmd = [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--idle-timeout", "600"]
        self._start("scheduler", cmd)
        deadline = time.monotonic() + 120
        while not self.scheduler_file.exists():
            if time.monotonic() > deadline or self.procs["scheduler"].poll() is not None:
                raise RuntimeError(f"the scheduler did not start: {self._log('scheduler')}")
            time.sleep(0.1)
        time.sleep(0.2)  # the file is written in one go, but give it a moment
        self.address = json.loads(self.scheduler_file.read_text())["address"]
        for i in range(n_workers):
            self.add_worker(f"w{i}")
        return self

    def _start(self, name: str, cmd: list[str]) -> None:
        if cmd[1] == "scheduler":
            cmd += ["--scheduler-file", str(self.scheduler_file)]
        log = (self.base / f"{name}.log").open("wb")
        self.procs[name] = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env, cwd=self.base, start_new_session=True
        )

    def _log(self, name: str) -> str:
        return (self.base / f"{name}.log").read_text(errors="replace")[-2000:]

    def add_worker(self, name: str) -> None:
        """Start a worker of one thread, without nanny, named `name`."""
        cmd = [DASK, "worker", self.address, "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1"]
        self._start(name, [*cmd, "--name", name, "--death-timeout", "60"])

    def kill(self, name: str) -> None:
        """Kill a process of the cluster at once (SIGKILL), as a lost machine would go."""
        proc = self.procs[name]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

    def close(self) -> None:
        """End every process this cluster started (workers first), by id."""
        for name in sorted(self.procs, key=lambda n: n == "scheduler"):
            proc = self.procs[name]
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait(timeout=15)


@pytest.fixture
def dask_cluster(tmp_path_factory):
    """A factory of clusters by hand (`DaskCluster(n_workers)`); every one is closed at the end of the test."""
    made: list[DaskCluster] = []

    def make(n_workers: int = 2) -> DaskCluster:
        made.append(DaskCluster(tmp_path_factory.mktemp("dask")))
        return made[-1].start(n_workers)

    try:
        yield make
    finally:
        for cluster in made:
            cluster.close()

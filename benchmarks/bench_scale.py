"""Benchmark a national-operator calibration on Dask (issue [Z]): the embedded operator x K as partitioned Parquet.

Each run is `autovend calibrate SRC --scheduler local --workers W --worker-memory M` in a child process; the
resident memory of the child and of each Dask worker process is sampled every half second (psutil, the whole
process tree), so a worker's peak is its own. The source is `benchmarks/scaled_source.py --partitioned`: the
embedded operator's records copied onto K machine sets, orders and inventory by month in files of ten copies
(written under --keep, or a temporary folder; never committed). Prints wall seconds, the client's and each
worker's peak, the workers' CPU seconds, their ratios to the issue's goals, and the estimate's hash (x K copies
of one operator give nearly the same estimates whatever K).

Goals (2-core machine, 2 local workers): x50 (10.7M lines) at most 240 s wall and 1.5 GiB per worker; x200 (43M
lines) calibrates with at most 2 GiB per worker (time reported). From the workers' CPU seconds per order line
and the client's seconds per machine it writes an estimate of 10^9 lines on 50 workers.

    .venv/bin/python benchmarks/bench_scale.py                       # x50
    .venv/bin/python benchmarks/bench_scale.py --sets 50 200 --keep /tmp/scale
    .venv/bin/python benchmarks/bench_scale.py --sets --identity 20     # x20 flat: same bytes three ways

`--identity K` calibrates the flat x K copy (`scaled_source.py`, CSV) in one process, on a local cluster and on
an external `dask scheduler` with two `dask worker` processes, and compares the three calibration.json files.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_calibrate import _embedded_source  # noqa: E402
from scaled_source import build_partitioned_source, build_scaled_source  # noqa: E402

GOALS = {50: (240.0, 1536.0), 200: (None, 2048.0)}  # wall seconds, MiB per worker
TARGET_LINES, TARGET_WORKERS = 10**9, 50

CHILD = """
import json, sys, time
from pathlib import Path
from autovend.pipeline.calibrate import run
if __name__ == "__main__":
    t0 = time.perf_counter()
    marks = {}
    from autovend.progress import listening
    def listen(what, frac):
        marks.setdefault(what, round(time.perf_counter() - t0, 1))
    with listening(listen):
        res, _ = run(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), force=True,
                     scheduler="local", workers=int(sys.argv[5]), worker_memory=sys.argv[6])
    print(json.dumps({"hash": res.content_hash(), "machines": res.estimates.n_machines, "steps": marks}))
"""


def _sampled(cmd: list[str]) -> dict:
    """Run `cmd`; its wall seconds, stdout's last line, and the peak RSS and CPU seconds of each process of its tree.

    The child writes to files, not pipes: nothing reads a pipe while the child runs, and a child that writes more
    than a pipe holds (64 KiB; the tasks' progress bars of a long calibration) would block in the write forever.
    """
    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        found = _sampled_to(cmd, out_file, err_file)
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    if found.pop("returncode") != 0:
        raise SystemExit(f"{' '.join(cmd[:3])} failed:\n{err[-3000:]}")
    return {**found, **json.loads(out.strip().splitlines()[-1])}


def _step_peaks(steps: dict[str, float], series: list[tuple[float, int]]) -> dict[str, int]:
    """The largest resident size of any worker while each step was under way (steps by their start, in seconds)."""
    starts = sorted((t, name.split(": ", 1)[-1]) for name, t in steps.items())
    peaks: dict[str, int] = {}
    for i, (t, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else float("inf")
        inside = [rss for at, rss in series if t <= at < end]
        if inside:
            peaks[name] = round(max(inside) / 2**20)
    return peaks


def _sampled_to(cmd: list[str], out_file: Any, err_file: Any) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=out_file, stderr=err_file, text=True)
    root = psutil.Process(proc.pid)
    peaks: dict[int, int] = {}
    cpu: dict[int, float] = {}
    kind: dict[int, str] = {}
    series: list[tuple[float, int, int]] = []  # (seconds from start, pid, resident bytes)
    while proc.poll() is None:
        try:
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            tree = []
        for p in tree:
            try:
                with p.oneshot():
                    rss, times = p.memory_info().rss, p.cpu_times()
                    if p.pid not in kind:
                        line = " ".join(p.cmdline())
                        kind[p.pid] = "client" if p.pid == proc.pid else ("worker" if "spawn_main" in line else "other")
            except psutil.Error:
                continue
            peaks[p.pid] = max(peaks.get(p.pid, 0), rss)
            series.append((time.perf_counter() - t0, p.pid, rss))
            cpu[p.pid] = times.user + times.system
        time.sleep(0.5)
    proc.wait()
    workers = sorted((p for p in peaks if kind.get(p) == "worker" and peaks[p] > 100 * 2**20), key=peaks.get)
    return {
        "wall_s": time.perf_counter() - t0,
        "client_mib": peaks.get(proc.pid, 0) / 2**20,
        "client_cpu_s": cpu.get(proc.pid, 0.0),
        "worker_mib": [peaks[p] / 2**20 for p in workers],
        "worker_cpu_s": sum(cpu[p] for p in workers),
        "worker_series": [(t, rss) for t, pid, rss in series if pid in workers],
        "returncode": proc.returncode,
    }


IDENTITY_CHILD = """
import sys, time
from pathlib import Path
from autovend.pipeline.calibrate import run
if __name__ == "__main__":
    t0 = time.perf_counter()
    kw = {"scheduler": sys.argv[5], "workers": 2} if len(sys.argv) > 5 else {}
    run(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]), force=True, **kw)
    print(round(time.perf_counter() - t0, 1))
"""


def _external_cluster(base: Path, memory: str) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """A `dask scheduler` and two `dask worker` processes (one thread each) on 127.0.0.1: its address and processes."""
    dask = str(Path(sys.executable).with_name("dask"))
    file = base / "scheduler.json"
    procs = [
        subprocess.Popen(
            [dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(file)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    while not file.exists():
        time.sleep(0.2)
    time.sleep(0.5)
    address = json.loads(file.read_text())["address"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for _ in range(2):
        cmd = [dask, "worker", address, "--nthreads", "1", "--memory-limit", memory, "--no-dashboard"]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
    return address, procs


def identity(work: Path, base: Path, k: int, memory: str) -> None:
    """Calibrate the flat x k copy in process, on a local cluster and on an external one; compare the bytes."""
    src = work / f"cn-x{k}"
    if not src.exists():
        build_scaled_source(base, src, k)
    params, settings = ROOT / "params/synthetic-cn.yaml", ROOT / "params/benchmark.yaml"
    address, procs = _external_cluster(work, memory)
    try:
        outs, times = {}, {}
        for name, where in (("in process", []), ("local cluster", ["local"]), ("external", [address])):
            out = work / f"identity-x{k}-{name.replace(' ', '-')}"
            cmd = [sys.executable, "-c", IDENTITY_CHILD, str(src), str(out), str(params), str(settings), *where]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise SystemExit(f"calibrating x{k} {name} failed:\n{done.stderr[-3000:]}")
            times[name] = float(done.stdout.strip().splitlines()[-1])
            outs[name] = (out / "calibration.json").read_bytes()
    finally:
        for proc in procs:
            proc.terminate()
    same = len(set(outs.values())) == 1
    print(
        f"x{k} flat: calibration.json {'the same bytes' if same else 'DIFFERS'} in process, on a local cluster "
        f"and on an external scheduler with 2 workers ({', '.join(f'{n} {t:.0f} s' for n, t in times.items())})"
    )


def _order_lines(src: Path) -> int:
    """Order lines of a partitioned source (from its Parquet footers)."""
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in sorted((src / "orders").rglob("*.parquet")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, nargs="*", default=[50], help="machine sets (copies of the operator)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker-memory", default="2GiB", help="each local worker's memory limit")
    parser.add_argument("--keep", type=Path, default=None, help="build the sources here and keep them")
    parser.add_argument("--identity", type=int, default=None, help="also check the flat x K copy's bytes 3 ways")
    args = parser.parse_args()
    params, settings = ROOT / "params/synthetic-cn.yaml", ROOT / "params/benchmark.yaml"
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        base = _embedded_source(work)
        if args.identity:
            identity(work, base, args.identity, args.worker_memory)
        for k in args.sets:
            src = work / f"cn-x{k}-parts"
            if not src.exists():
                t0 = time.perf_counter()
                build_partitioned_source(base, src, k)
                print(f"  built x{k} partitioned in {time.perf_counter() - t0:.0f} s", flush=True)
            cmd = [sys.executable, "-c", CHILD, str(src), str(Path(tmp) / f"cal-x{k}"), str(params), str(settings)]
            r = _sampled([*cmd, str(args.workers), args.worker_memory])
            wall_goal, mem_goal = GOALS.get(k, (None, None))
            peak = max(r["worker_mib"], default=0.0)
            line = (
                f"x{k:<4} {r['machines']:6d} machines  wall {r['wall_s']:6.0f} s  client {r['client_mib']:5.0f} MiB "
                f"(cpu {r['client_cpu_s']:.0f} s)  workers {', '.join(f'{m:.0f}' for m in r['worker_mib'])} MiB "
                f"(cpu {r['worker_cpu_s']:.0f} s)"
            )
            if wall_goal:
                line += f"  | wall/goal {r['wall_s'] / wall_goal:.2f}"
            if mem_goal:
                line += f"  worker peak/goal {peak / mem_goal:.2f}"
            print(line + f"  (hash {r['hash'][:12]})", flush=True)
            lines = _order_lines(src)
            print(f"       {lines:,} order lines; steps (s from start): {r['steps']}", flush=True)
            print(f"       workers' peak in each step (MiB): {_step_peaks(r['steps'], r['worker_series'])}", flush=True)
            per_line = r["worker_cpu_s"] / lines
            per_machine = r["client_cpu_s"] / r["machines"]
            scale = TARGET_LINES / lines
            est = (r["worker_cpu_s"] * scale) / TARGET_WORKERS + r["client_cpu_s"] * scale
            print(
                f"       10^9 lines on {TARGET_WORKERS} workers, from this run's costs: workers "
                f"{per_line * 1e6:.1f} CPU us/line, client {per_machine * 1e3:.1f} CPU ms/machine -> about "
                f"{est / 3600:.1f} h (the client's share {r['client_cpu_s'] * scale / 3600:.1f} h does not spread)",
                flush=True,
            )


if __name__ == "__main__":
    main()

"""Benchmark `autovend calibrate` at 1x, 10x and 50x machine sets of the embedded operator, and on 1M CSV lines.

Each run is a child process running the calibrate stage (`autovend.pipeline.calibrate.run`: check and
load the source, calibrate, write the folder) with the embedded operator's params, so its peak resident
memory (ru_maxrss) is its own. Nx is the embedded operator's records copied onto N machine sets
(`benchmarks/scaled_source.py`); `csv1m` is the 1,000,000-line source of `bench_check.py` (20 machines).
The children share one numba cache folder (in the benchmark's temporary folder): the first run that needs the
compiled kernels compiles them, the later ones load them, as a user's later runs do; csv1m is also run once cold,
with an empty cache (`csv1m cold`: the first run after an install, about 2 s CPU more).
Prints wall and CPU seconds (median of the runs: the machine may be shared, so CPU time is the steadier
figure), peak memory, the ratio of each to its goal, the content hash of the estimates (Nx copies
of one operator give the same estimates whatever N, up to the shrinkage prior), and the floor measured
in the same run: a child reading the source's order lines from Parquet (goal: calibration within 30x).

    .venv/bin/python benchmarks/bench_calibrate.py                      # 1x (3 runs), 10x, 50x, csv1m
    .venv/bin/python benchmarks/bench_calibrate.py --sets 1 20 --repeat 5 --keep /tmp/sources

Goals (issue [M], 2-core machine): 1x <= 10 s and <= 500 MB; 50x <= 90 s and <= 4 GiB (the issue's
2,000-machine operator had 4.3M order lines: today's operator has 215k, so 20x matches its size and
50x is 2.5 times larger); csv1m <= 15 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_check import build_source  # noqa: E402
from scaled_source import build_scaled_source  # noqa: E402

GOALS = {1: (10.0, 500.0), 20: (90.0, 4096.0), 50: (90.0, 4096.0), "csv1m": (15.0, None)}  # seconds, MiB
# issue [V]: the embedded operator without its inventory table at most twice its time with the sales rule, which was
# 4.5 s CPU and 317 MiB (median of 3 child processes, `--sales-only` run on commit ea5a7e7 from another folder with
# PYTHONPATH at that commit, this 2-core machine while busy, 2026-12-02; the latent availability then: 8.3-8.5 s)
SALES_ONLY_BEFORE = 4.5
GOALS["sales-only"] = (2 * SALES_ONLY_BEFORE, None)
FLOOR_RATIO_GOAL = 30.0  # issue [S]: calibration within 30 times the time of reading its order lines from Parquet

FLOOR = textwrap.dedent(
    """
    import json, sys, time
    c0 = time.process_time()
    import pyarrow.parquet as pq
    rows = pq.read_table(sys.argv[1]).num_rows
    print(json.dumps({"cpu_s": time.process_time() - c0, "rows": rows}))
    """
)


def _floor(source: Path, work: Path) -> dict:
    """CPU seconds of a child reading the source's order lines from Parquet (written once to `work`), median of 3."""
    parquet = work / f"{source.name}-orders.parquet"
    if not parquet.exists():
        import pyarrow.csv as pcsv
        import pyarrow.parquet as pq

        orders = source / "orders.parquet"
        table = pq.read_table(orders) if orders.exists() else pcsv.read_csv(source / "orders.csv")
        pq.write_table(table, parquet)
    runs = []
    for _ in range(3):
        done = subprocess.run([sys.executable, "-c", FLOOR, str(parquet)], capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {"cpu_s": statistics.median(r["cpu_s"] for r in runs), "rows": runs[0]["rows"]}


CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    from pathlib import Path
    t0, c0 = time.perf_counter(), time.process_time()
    from autovend.pipeline.calibrate import run
    res, _ = run(Path(sys.argv[1]), Path(sys.argv[2]), *(Path(a) if a else None for a in sys.argv[3:5]))
    print(json.dumps({
        "wall_s": time.perf_counter() - t0,
        "cpu_s": time.process_time() - c0,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "hash": res.content_hash(),
        "machines": res.estimates.n_machines,
    }))
    """
)


def _embedded_source(work: Path) -> Path:
    """The embedded operator's source: data/raw/synthetic-cn if generated, else `autovend synth` into `work`."""
    src = ROOT / "data/raw/synthetic-cn"
    if (src / "orders.csv").is_file():
        return src
    from autovend.pipeline.synthesize import run

    run(work / "synthetic-cn", work / "truth", ROOT / "params/synthetic-cn.yaml", ROOT / "params/benchmark.yaml")
    return work / "synthetic-cn"


def _calibrate(source: Path, out: Path, params: Path | None, numba_cache: Path) -> dict:
    """One child calibrating `source`, numba's cache in `numba_cache` (an empty folder: it compiles its kernels)."""
    settings = ROOT / "params/benchmark.yaml"
    cmd = [sys.executable, "-c", CHILD, str(source), str(out), str(params or ""), str(settings)]
    env = {**os.environ, "NUMBA_CACHE_DIR": str(numba_cache)}
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise SystemExit(f"calibrating {source} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _report(name: str, runs: list[dict], goal: tuple[float, float | None] | None, floor: dict | None = None) -> None:
    wall = statistics.median(r["wall_s"] for r in runs)
    cpu = statistics.median(r["cpu_s"] for r in runs)
    peak = max(r["peak_mib"] for r in runs)
    line = f"{name:>10}: {runs[0]['machines']:5d} machines  wall {wall:7.1f} s  cpu {cpu:7.1f} s  peak {peak:7.0f} MiB"
    if goal is not None:
        line += f"  | wall/goal {wall / goal[0]:.2f}  cpu/goal {cpu / goal[0]:.2f}"
        if goal[1] is not None:
            line += f"  peak/goal {peak / goal[1]:.2f}"
    line += f"  ({len(runs)} run{'s' if len(runs) > 1 else ''}, median; hash {runs[0]['hash'][:12]})"
    if floor is not None:
        line += (
            f"\n{'':>8}floor: reading its {floor['rows']:,} order lines from Parquet {floor['cpu_s']:.2f} s CPU"
            f"  | cpu/floor {cpu / floor['cpu_s']:.0f} (goal {FLOOR_RATIO_GOAL:.0f})"
        )
    print(line, flush=True)


def main() -> None:
    """Build the sources, calibrate each, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, nargs="*", default=[1, 10, 50], help="machine sets to run")
    parser.add_argument("--repeat", type=int, default=3, help="runs at 1x (larger sources run once)")
    parser.add_argument("--csv1m", action=argparse.BooleanOptionalAction, default=True, help="also the 1M-line CSV")
    parser.add_argument(
        "--sales-only", action=argparse.BooleanOptionalAction, default=True,
        help="also the embedded operator without its inventory table (latent availability)",
    )  # fmt: skip
    parser.add_argument("--keep", type=Path, default=None, help="build the sources here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "numba"  # numba's cache of the whole benchmark: compiled by the first run that needs it
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        base = _embedded_source(work)
        params = ROOT / "params/synthetic-cn.yaml"
        for n in args.sets:
            src = base if n == 1 else work / f"synthetic-cn-x{n}"
            if n > 1 and not src.exists():
                build_scaled_source(base, src, n)
            runs = [
                _calibrate(src, Path(tmp) / f"cal-x{n}-{i}", params, cache) for i in range(args.repeat if n == 1 else 1)
            ]
            _report(f"{n}x", runs, GOALS.get(n), _floor(src, work))
        if args.sales_only:
            src = work / "synthetic-cn-sales-only"
            if not src.exists():
                src.mkdir()
                for f in base.iterdir():  # every table but inventory.csv (hard links: the source stays read-only)
                    if f.is_file() and f.name != "inventory.csv" and not f.name.startswith("."):
                        (src / f.name).hardlink_to(f)
            runs = [_calibrate(src, Path(tmp) / f"cal-sales-only-{i}", params, cache) for i in range(args.repeat)]
            _report("sales-only", runs, GOALS["sales-only"], _floor(src, work))
        if args.csv1m:
            src = work / "csv1m"
            if not src.exists():
                build_source(src, 1_000_000, "csv", broken=False)
            cold = _calibrate(src, Path(tmp) / "cal-csv1m-cold", None, Path(tmp) / "numba-csv1m")
            _report("csv1m cold", [cold], GOALS["csv1m"])  # numba compiles its kernels (a first run after install)
            runs = [
                _calibrate(src, Path(tmp) / f"cal-csv1m-{i}", None, Path(tmp) / "numba-csv1m")
                for i in range(args.repeat)
            ]
            _report("csv1m", runs, GOALS["csv1m"], _floor(src, work))


if __name__ == "__main__":
    main()

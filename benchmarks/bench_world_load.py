"""Benchmark: a fresh interpreter loading a world up to the answer of its first tool call (goal <= 0.4 s).

Each run is a child process (`python -X importtime` off, `-I` off so the checkout is imported) that
imports the tool session, loads `worlds/cn20`, opens a `ToolSession` and calls `get_calendar`, as a
server or an agent does before its first answer. The child reports the seconds from its first line
to the answer, split into imports, world loading and the session with its first call, and which
heavy packages (scipy, statsmodels, sklearn, matplotlib) it imported on the way: a world loaded
for play should not need the estimation stack. The child's CPU time is reported too: on a shared
machine it moves less with other load than the wall time does.

    .venv/bin/python benchmarks/bench_world_load.py [--world worlds/cn20] [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 0.4
HEAVY = ("scipy", "statsmodels", "sklearn", "matplotlib")

CHILD = textwrap.dedent(
    """
    import time
    t0 = time.perf_counter()
    import json, sys
    from autovend.session import ToolSession
    from autovend.world.bundle import load_world
    t1 = time.perf_counter()
    world = load_world(sys.argv[1])
    t2 = time.perf_counter()
    session = ToolSession(world, seed=1)
    res = session.call("get_calendar", {})
    t3 = time.perf_counter()
    assert res.ok, res
    heavy = sorted(name for name in sys.argv[2].split(",") if name in sys.modules)
    cpu = time.process_time()  # CPU seconds of the whole child (interpreter start-up included)
    print(json.dumps(
        {"total": t3 - t0, "imports": t1 - t0, "world": t2 - t1, "first_call": t3 - t2, "cpu": cpu, "heavy": heavy}
    ))
    session.close()
    """
)


FLOOR = textwrap.dedent(
    """
    import time
    t0 = time.perf_counter()
    import json, sys
    from pathlib import Path
    import pyarrow.parquet as pq
    tables = [pq.read_table(f) for f in sorted(Path(sys.argv[1]).glob("*.parquet"))]
    rows = sum(t.num_rows for t in tables)
    print(json.dumps({"total": time.perf_counter() - t0, "cpu": time.process_time(), "rows": rows}))
    """
)


def once(world: Path, child: str = CHILD) -> dict:
    """One child process running `child`; its timings."""
    cmd = [sys.executable, "-c", child, str(world), ",".join(HEAVY)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"loading {world} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Run the child `--repeat` times (after one warm-up for the file cache) and print medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", type=Path, default=ROOT / "worlds/cn20")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    once(args.world)
    runs, floors = [], []
    for _ in range(args.repeat):  # in turn, so that both see the same load on the machine
        runs.append(once(args.world))
        floors.append(once(args.world, FLOOR))
    med = {k: statistics.median(r[k] for r in runs) for k in ("total", "imports", "world", "first_call", "cpu")}
    floor = {k: statistics.median(r[k] for r in floors) for k in ("total", "cpu")}
    print(
        f"world load to the first tool call ({args.world.name}, median of {args.repeat}): {med['total']:.2f} s"
        f"  | ratio to the goal {GOAL_S} s: {med['total'] / GOAL_S:.2f}"
    )
    print(
        f"  imports {med['imports']:.2f} s, load_world {med['world']:.2f} s, "
        f"session + first call {med['first_call']:.2f} s"
    )
    print(f"  CPU time of the child {med['cpu']:.2f} s (less sensitive than wall time to other load on the machine)")
    print(f"  heavy packages imported: {', '.join(runs[0]['heavy']) or 'none'}")
    print(
        f"  floor (a child importing pyarrow and reading the world's Parquet files): {floor['total']:.2f} s, "
        f"{floor['cpu']:.2f} s CPU  | ratio to the floor: {med['total'] / floor['total']:.1f} "
        f"(CPU {med['cpu'] / floor['cpu']:.1f})"
    )


if __name__ == "__main__":
    main()

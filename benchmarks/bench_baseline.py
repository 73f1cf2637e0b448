"""Benchmark: a 180-day baseline episode on worlds/cn20, as `autovend run` does it (goal 6 s; budget 60 s).

The goal (issue [M]) is for the run without checkpoints or metrics; the 60 s budget is for the run with them.

`run_episode` with the default background checkpoints: the agent acts through the 18 tools, the run
folder is written, then metrics.json, report.md and figures. The instrumented run splits the time
into the agent's own work, the tool calls (simulator included), and the finishing of the folder.
Run either way:

    .venv/bin/python benchmarks/bench_baseline.py          # timings, where the time goes, the result
    .venv/bin/pytest benchmarks/bench_baseline.py          # pytest-benchmark, 1 round
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from autovend.agents.baseline import BaselineAgent
from autovend.runner import run_episode
from autovend.session import ToolSession
from autovend.world.bundle import load_world

WORLD, SEED, BUDGET_S = Path("worlds/cn20"), 1, 60.0
GOAL_S = 6.0  # issue [M]: the episode without checkpoints or metrics, on a 2-core machine


def episode(out: Path, seed: int = SEED) -> Any:
    world = load_world(WORLD)
    return run_episode(world, BaselineAgent(seed=seed), seed, out_dir=out, force=True, world_path=WORLD)


def test_baseline_episode_benchmark(benchmark: Any, tmp_path: Path) -> None:
    summary = benchmark.pedantic(episode, args=(tmp_path / "run",), rounds=1, iterations=1, warmup_rounds=0)
    assert summary.days == 180 and summary.metrics is not None
    assert summary.final_net_assets > 40_000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t, c = time.perf_counter(), time.process_time()
        summary = episode(Path(tmp) / "run")
        wall, cpu = time.perf_counter() - t, time.process_time() - c
    print(f"180-day baseline episode with metrics: {wall:.1f} s wall ({cpu:.1f} s CPU), budget {BUDGET_S:.0f} s")
    print(
        f"  run {summary.wall_time_s:.1f} s, finishing (run folder, metrics, report, figures) "
        f"{wall - summary.wall_time_s:.1f} s; checkpoints written {summary.checkpoints_written}, "
        f"skipped {summary.checkpoints_skipped} (background)"
    )
    print(f"  final net assets {summary.final_net_assets:,.2f} CNY")
    # where the run's time goes: tool calls by name (simulator inside) against the agent's own work
    seconds: Counter = Counter()
    calls: Counter = Counter()
    original = ToolSession.call

    def timed(self: ToolSession, name: str, arguments: Any = None) -> Any:
        t0 = time.perf_counter()
        out = original(self, name, arguments)
        seconds[name] += time.perf_counter() - t0
        calls[name] += 1
        return out

    ToolSession.call = timed  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            world = load_world(WORLD)
            t, c = time.perf_counter(), time.process_time()
            run_episode(
                world, BaselineAgent(seed=SEED), SEED, out_dir=Path(tmp) / "r", checkpoint="off", evaluate=False
            )
            run_s, run_cpu = time.perf_counter() - t, time.process_time() - c
    finally:
        ToolSession.call = original  # type: ignore[method-assign]
    inside = sum(seconds.values())
    agent_s = run_s - inside
    print(f"instrumented run without checkpoints or metrics {run_s:.1f} s: tools {inside:.1f} s, agent {agent_s:.1f} s")
    print(f"  | ratio to the goal {GOAL_S:.0f} s: {run_s / GOAL_S:.2f} (the timing wrapper adds a little)")
    print(f"  CPU time of this process in that run {run_cpu:.1f} s (the SQL worker process not counted)")
    for name, sec in seconds.most_common():
        print(f"  {name:24s} {sec:6.2f} s  {calls[name]:6d} calls  {sec / calls[name] * 1000:7.2f} ms/call")


if __name__ == "__main__":
    main()

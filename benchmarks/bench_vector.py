"""Benchmark: 64 cn20 episodes x 180 days of a scripted policy in the native vector env (goal <= 60 s CPU).

`gymnasium.make_vec("AutoVend-v0", num_envs=N)` steps N episodes in one process, sampling the demand of
the days ended in a step in one pass (`autovend.vector`). Each sub-environment is driven by a
`KnobAgent` (`autovend.agents.knobs`: every action a JSON tool call, about 15 a day: catalog pages,
machine reads, restocks, orders, prices, the end of the day), seeds 1..N. The peer, measured in the
same run, is gymnasium's own `SyncVectorEnv` over the single `AutoVend-v0` envs with the same agents
on the first `--peer` episodes, against the native env on those same episodes: the ratio says what the
native env adds over a loop of single envs (both must end with the same net assets, which the benchmark
checks). Per episode, N episodes in one process cost a little more than a few (Python's garbage
collector walks every live episode's objects: about a tenth of the time at N = 16). CPU seconds are
the process's own (the whole run is in this process), the steady figure on a shared machine.

    .venv/bin/python benchmarks/bench_vector.py [--episodes 64] [--peer 8] [--knobs 0.5,0.5,0.5,0.5,0.5]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import gymnasium
import numpy as np
from gymnasium.vector import SyncVectorEnv

import autovend.gym  # noqa: F401 - registers AutoVend-v0 and its vector entry point
from autovend.agents.knobs import Knobs, run_episodes
from autovend.gym import AutoVendEnv

ROOT = Path(__file__).resolve().parents[1]
WORLD = str(ROOT / "worlds/cn20")
GOAL_CPU_S = 60.0  # issue [S]: 64 cn20 episodes x 180 days of a scripted policy
GOAL_EPISODES = 64


def timed(envs: gymnasium.vector.VectorEnv, knobs: Knobs, seeds: list[int]) -> tuple[np.ndarray, float, float]:
    """Final net assets, CPU and wall seconds of one episode per sub-environment."""
    t, c = time.perf_counter(), time.process_time()
    final = run_episodes(envs, [knobs] * len(seeds), seeds)
    return final, time.process_time() - c, time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=GOAL_EPISODES)
    parser.add_argument("--peer", type=int, default=8, help="episodes run in SyncVectorEnv too (0: none)")
    parser.add_argument("--knobs", default="", help="the agent's knobs as 5 numbers in [0, 1] (default: Knobs())")
    args = parser.parse_args()
    knobs = Knobs.from_vector([float(x) for x in args.knobs.split(",")]) if args.knobs else Knobs()
    seeds = list(range(1, args.episodes + 1))
    native = gymnasium.make_vec("AutoVend-v0", num_envs=args.episodes, world=WORLD)
    final, cpu, wall = timed(native, knobs, seeds)
    native.close()
    per = cpu / args.episodes
    print(f"{args.episodes} cn20 episodes x 180 days, native vector env, {knobs}")
    print(
        f"  CPU {cpu:.1f} s ({per:.2f} s an episode, {per / 180 * 1000:.2f} ms an episode-day), wall {wall:.1f} s"
        f"  | ratio to the goal {GOAL_CPU_S:.0f} s for {GOAL_EPISODES}: {per * GOAL_EPISODES / GOAL_CPU_S:.2f}"
    )
    print(f"  final net assets: mean {final.mean():,.0f}, min {final.min():,.0f}, max {final.max():,.0f}")
    if args.peer:
        n = min(args.peer, args.episodes)
        small = gymnasium.make_vec("AutoVend-v0", num_envs=n, world=WORLD)
        small_final, small_cpu, _ = timed(small, knobs, seeds[:n])
        small.close()
        sync = SyncVectorEnv([lambda: AutoVendEnv(WORLD) for _ in range(n)])
        peer_final, peer_cpu, _ = timed(sync, knobs, seeds[:n])
        sync.close()
        same = np.array_equal(peer_final, final[:n]) and np.array_equal(small_final, final[:n])
        print(
            f"  peer: gymnasium's SyncVectorEnv on the first {n} episodes: {peer_cpu / n:.2f} s CPU an episode, "
            f"the native env on the same {n}: {small_cpu / n:.2f} s"
            f"  | ratio native / sync: {small_cpu / peer_cpu:.2f}; the same net assets: {same}"
        )
        if not same:
            raise SystemExit("the native vector env and SyncVectorEnv disagree")


if __name__ == "__main__":
    main()

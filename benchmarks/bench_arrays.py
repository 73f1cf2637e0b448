"""Benchmark: the array baseline on N cn20 episodes x 180 days in `AutoVend-Array-v0` (issue [Y]: 1,024 episodes
in at most 60 s CPU, at most 1 us per machine-slot-day), beside a plain numpy loop over the same cells.

The native vector env (`autovend.arrays.env.ArrayVendVectorEnv`) steps every episode's day in numpy
(`autovend.arrays.core.ArraySim`); the policy is `autovend.agents.array_baseline.ArrayBaseline`, the rule-based
baseline ported to arrays (on seeds 1-3 it ends where `autovend run --agent baseline` ends, to the fen). CPU
seconds are the process's own, split into the policy's and the env's. A machine-slot-day is one of the N x M x S
x days cells of the slot arrays; a stocked cell-day is one holding units (what demand is drawn on). The plain loop
is the floor of any array simulator over the same N x M x S cells: each day a Poisson draw per cell from numpy's
generator, sales = min(demand, units), revenue, and a restock to a fixed level where units ran low.

MABIM (ReplenishmentEnv, the issue's other peer) is not on PyPI and not in the lock: it is not measured here.

    .venv/bin/python benchmarks/bench_arrays.py [--episodes 1024] [--days 180] [--slots 64]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from autovend.agents.array_baseline import ArrayBaseline
from autovend.arrays.env import ArrayVendVectorEnv

ROOT = Path(__file__).resolve().parents[1]
WORLD = ROOT / "worlds" / "cn20"
GOAL_CPU_S = 60.0
GOAL_US_PER_CELL = 1.0
GOAL_EPISODES = 1024


def array_baseline(episodes: int, days: int, slots: int) -> dict[str, Any]:
    """Run the array baseline; CPU seconds (policy, env), stocked cell-days and final net assets."""
    c0 = time.process_time()
    envs = ArrayVendVectorEnv(episodes, world=WORLD, days=days, slots=slots)
    policy = ArrayBaseline(WORLD, episodes, slots)
    setup = time.process_time() - c0
    obs, _ = envs.reset(seed=1)  # episode i has seed 1 + i
    policy_s = env_s = 0.0
    stocked = 0
    info: dict[str, np.ndarray] = {}
    for _ in range(days):
        a = time.process_time()
        action = policy.act(obs)
        b = time.process_time()
        obs, _, terminated, truncated, info = envs.step(action)
        c = time.process_time()
        policy_s += b - a
        env_s += c - b
        stocked += int(np.count_nonzero(obs["slot_units"]))
    final = np.asarray(info["net_assets"])
    cuts = policy.slot_cuts
    return {"setup": setup, "policy": policy_s, "env": env_s, "stocked": stocked, "final": final, "cuts": cuts}


def plain_loop(episodes: int, machines: int, slots: int, days: int) -> float:
    """CPU seconds of the plain numpy loop over episodes x machines x slots x days cells."""
    rng = np.random.default_rng(0)
    shape = (episodes, machines, slots)
    rates = rng.gamma(0.5, 0.6, shape)
    price = rng.uniform(3.0, 8.0, shape)
    units = np.full(shape, 6, dtype=np.int64)
    revenue = np.zeros(episodes)
    c0 = time.process_time()
    for _ in range(days):
        demand = rng.poisson(rates)
        sales = np.minimum(demand, units)
        units -= sales
        revenue += (sales * price).sum(axis=(1, 2))
        units = np.where(units < 2, 6, units)
    return time.process_time() - c0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=GOAL_EPISODES)
    parser.add_argument("--days", type=int, default=180)
    parser.add_argument("--slots", type=int, default=64)
    args = parser.parse_args()
    n, d, s = args.episodes, args.days, args.slots
    got = array_baseline(n, d, s)
    machines = 20
    cells = n * machines * s * d
    cpu = got["policy"] + got["env"]
    loop = plain_loop(n, machines, s, d)
    final = got["final"]
    print(f"{n} cn20 episodes x {d} days, array baseline in AutoVend-Array-v0 ({s} slots a machine)")
    print(
        f"  CPU {cpu:.1f} s (policy {got['policy']:.1f}, env {got['env']:.1f}; setup {got['setup']:.1f})"
        f"  | ratio to the goal {GOAL_CPU_S:.0f} s for {GOAL_EPISODES} x 180 days: "
        f"{cpu * GOAL_EPISODES * 180 / (n * d) / GOAL_CPU_S:.2f}"
    )
    print(
        f"  per machine-slot-day: {cpu / cells * 1e6:.3f} us (env alone {got['env'] / cells * 1e6:.3f})"
        f"  | goal {GOAL_US_PER_CELL:.0f} us; per stocked cell-day {cpu / max(got['stocked'], 1) * 1e6:.2f} us"
        f" ({got['stocked'] / (n * d * machines):.1f} stocked slots a machine-day)"
    )
    print(f"  plain numpy loop over the same {cells:,} cells: {loop:.1f} s, {loop / cells * 1e6:.3f} us a cell")
    print(f"  final net assets: mean {final.mean():,.0f}, min {final.min():,.0f}, max {final.max():,.0f}")
    cuts = got["cuts"]
    print(f"  clearance left out for want of slots: {int(cuts.sum())} products in {int((cuts > 0).sum())} episodes")
    if d == 180 and n >= 3:
        seeds = ", ".join(f"{x:,.2f}" for x in final[:3])
        print(f"  seeds 1-3: {seeds} (the tool baseline's: 274,304.79, 302,310.68, 295,052.50)")
    print("  MABIM: not on PyPI, not in the lock; not measured")


if __name__ == "__main__":
    main()

"""Shared by the array baseline's kernel tests: the policy after a stretch of cn20 days."""

from __future__ import annotations

from pathlib import Path

from autovend.agents.array_baseline import ArrayBaseline
from autovend.arrays.core import ArraySim
from autovend.world.bundle import as_world

ROOT = Path(__file__).resolve().parents[2]


def played_policy(days: int, runs: int = 3) -> ArrayBaseline:
    """The array baseline after `days` days of seeds 1..runs (openings, trials, reviews, products selling down)."""
    world = as_world(ROOT / "worlds" / "cn20")
    sim = ArraySim(world, runs, slots=64)
    policy = ArrayBaseline(world, runs, 64)
    obs = sim.reset(list(range(1, runs + 1)))
    for _ in range(days):
        obs, _, _ = sim.step(policy.act(obs))
    return policy

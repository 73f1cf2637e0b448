"""Train the five knobs of `autovend.agents.array_knobs.ArrayKnobs` with the cross-entropy method (numpy only).

Every generation runs `--population` knob vectors on each training seed as one `AutoVend-Array-v0` vector env
(all runs stepped together in numpy), scores each vector by its mean final net assets, and refits a diagonal
Gaussian to the best `--elite`. The starting knobs (0.5 each) and the mean of the last fit are then both run on
the held-out seeds, which training never saw.

    .venv/bin/python examples/array_es.py --world worlds/cn20 --generations 8 --population 16
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from autovend.agents.array_knobs import KNOB_NAMES, ArrayKnobs, knob_values
from autovend.arrays.env import ArrayVendVectorEnv


def evaluate(world: str, thetas: np.ndarray, seeds: list[int], days: int, slots: int = 48) -> np.ndarray:
    """(len(thetas), len(seeds)) final net assets: every knob vector on every seed, in one vector env."""
    runs = np.repeat(thetas, len(seeds), axis=0)
    envs = ArrayVendVectorEnv(len(runs), world=world, days=days, slots=slots)
    policy = ArrayKnobs(envs.facts, runs, slots)
    obs, _ = envs.reset(seed=seeds * len(thetas))
    info: dict[str, np.ndarray] = {}
    for _ in range(days):
        obs, _, _, _, info = envs.step(policy.act(obs))
    return np.asarray(info["net_assets"]).reshape(len(thetas), len(seeds))


def train(
    world: str, generations: int, population: int, elite: int, seeds: list[int], days: int, rng: np.random.Generator
) -> np.ndarray:
    """The mean knobs after `generations` of the cross-entropy method, from 0.5 each."""
    mean, std = np.full(len(KNOB_NAMES), 0.5), np.full(len(KNOB_NAMES), 0.25)
    for g in range(generations):
        c0 = time.process_time()
        thetas = np.clip(mean + std * rng.standard_normal((population, len(KNOB_NAMES))), 0.0, 1.0)
        thetas[0] = mean  # the current mean is always scored too
        scores = evaluate(world, thetas, seeds, days).mean(axis=1)
        best = thetas[np.argsort(-scores)[:elite]]
        mean, std = best.mean(axis=0), np.maximum(best.std(axis=0), 0.03)
        print(
            f"generation {g + 1}: mean of the population {scores.mean():,.0f}, best {scores.max():,.0f}, "
            f"the old mean {scores[0]:,.0f}  ({time.process_time() - c0:.1f} s CPU)"
        )
    return mean


def main() -> None:
    """Train, then score the starting and the trained knobs on the held-out seeds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", default="worlds/cn20")
    parser.add_argument("--generations", type=int, default=8)
    parser.add_argument("--population", type=int, default=16)
    parser.add_argument("--elite", type=int, default=4)
    parser.add_argument("--train-seeds", default="1,2")
    parser.add_argument("--test-seeds", default="11,12,13,14,15")
    parser.add_argument("--days", type=int, default=180)
    parser.add_argument("--rng", type=int, default=0)
    args = parser.parse_args()
    train_seeds = [int(s) for s in args.train_seeds.split(",")]
    test_seeds = [int(s) for s in args.test_seeds.split(",")]
    c0 = time.process_time()
    mean = train(
        args.world,
        args.generations,
        args.population,
        args.elite,
        train_seeds,
        args.days,
        np.random.default_rng(args.rng),
    )
    start = np.full(len(KNOB_NAMES), 0.5)
    held_out = evaluate(args.world, np.stack([start, mean]), test_seeds, args.days)
    values = knob_values(mean[None])[0]
    print("trained knobs: " + ", ".join(f"{k} {v:.2f}" for k, v in zip(KNOB_NAMES, values, strict=True)))
    print(
        f"held-out seeds {test_seeds}: starting knobs {held_out[0].mean():,.0f}, trained {held_out[1].mean():,.0f} "
        f"(mean final net assets; {time.process_time() - c0:.0f} s CPU in all)"
    )


if __name__ == "__main__":
    main()

"""Train the five knobs of `autovend.agents.knobs.KnobAgent` with the cross-entropy method (numpy only).

Every generation runs `--population` knob vectors on each training seed as one vector env of
`AutoVend-v0` (`gymnasium.make_vec`, the native vector env: all episodes in one process, their demand
sampled together), scores each vector by its mean final net assets, and refits a diagonal Gaussian
to the best `--elite`. The mean of the last fit is then run on the held-out seeds, which training
never saw, and printed beside the prices-pinned baseline's result on the same seeds if given
(`--pinned 159240.59,...`: `autovend run --agent baseline --agent-config
baseline-pinned-prices --seed S` for each held-out seed).

    .venv/bin/python examples/vector_es.py --world worlds/cn20 --generations 6 --population 12
"""

from __future__ import annotations

import argparse
import time

import gymnasium
import numpy as np

import autovend.gym  # noqa: F401  (registers AutoVend-v0 and its vector entry point)
from autovend.agents.knobs import KNOB_NAMES, Knobs, run_episodes


def evaluate(world: str, thetas: np.ndarray, seeds: list[int]) -> np.ndarray:
    """(len(thetas), len(seeds)) final net assets: every knob vector on every seed, one vector env."""
    knobs = [Knobs.from_vector(t) for t in thetas for _ in seeds]
    envs = gymnasium.make_vec("AutoVend-v0", num_envs=len(knobs), world=world)
    try:
        final = run_episodes(envs, knobs, seeds * len(thetas))
    finally:
        envs.close()
    return final.reshape(len(thetas), len(seeds))


def main() -> None:
    """Train, then score the trained knobs on the held-out seeds."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", default="worlds/cn20")
    parser.add_argument("--generations", type=int, default=6)
    parser.add_argument("--population", type=int, default=12)
    parser.add_argument("--elite", type=int, default=4)
    parser.add_argument("--train-seeds", default="1,2")
    parser.add_argument("--test-seeds", default="11,12,13,14,15")
    parser.add_argument("--pinned", default="", help="the prices-pinned baseline's final net assets on the test seeds")
    parser.add_argument("--rng", type=int, default=0)
    args = parser.parse_args()
    train = [int(s) for s in args.train_seeds.split(",")]
    test = [int(s) for s in args.test_seeds.split(",")]
    rng = np.random.default_rng(args.rng)
    mean, std = np.full(len(KNOB_NAMES), 0.5), np.full(len(KNOB_NAMES), 0.3)
    for g in range(args.generations):
        t0, c0 = time.perf_counter(), time.process_time()
        thetas = np.clip(mean + std * rng.standard_normal((args.population, len(KNOB_NAMES))), 0.0, 1.0)
        thetas[0] = mean  # the current mean is always scored too
        scores = evaluate(args.world, thetas, train).mean(axis=1)
        elite = thetas[np.argsort(-scores)[: args.elite]]
        mean, std = elite.mean(axis=0), np.maximum(elite.std(axis=0), 0.03)
        print(
            f"generation {g + 1}: best {scores.max():,.0f}, mean {scores.mean():,.0f} "
            f"({args.population * len(train)} episodes, {time.perf_counter() - t0:.0f} s wall, "
            f"{time.process_time() - c0:.0f} s CPU) -> {Knobs.from_vector(mean)}"
        )
    print(f"trained knobs {Knobs.from_vector(mean)}, as a vector in [0, 1]: {','.join(f'{x:.3f}' for x in mean)}")
    held = evaluate(args.world, mean[None, :], test)[0]
    print(f"held-out seeds {test}: {', '.join(f'{x:,.2f}' for x in held)}; mean {held.mean():,.2f}")
    if args.pinned:
        pinned = np.array([float(x) for x in args.pinned.split(",")])
        diff = held - pinned
        print(
            f"prices-pinned baseline on the same seeds: mean {pinned.mean():,.2f}; "
            f"trained minus baseline {diff.mean():+,.2f} (per seed {', '.join(f'{d:+,.0f}' for d in diff)})"
        )


if __name__ == "__main__":
    main()

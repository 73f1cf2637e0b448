"""N array runs are N simulator runs: the same actions give the same days, to the fen, run by run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autovend.arrays import kernel
from autovend.arrays.core import ArraySim
from autovend.arrays.settle import expected_demand
from autovend.env.boundary import episode_of
from autovend.world.model import Economics
from autovend.world.toy import toy_world
from tests.arrays.helpers import Mirror, random_action

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def world():
    return toy_world(4, 20, seed=2, economics=Economics(horizon_days=40))


def _play(world, days: int, seeds: list[int], slots: int, rng_seed: int, fill: bool = False) -> ArraySim:
    rng = np.random.default_rng(rng_seed)
    sim = ArraySim(world, len(seeds), slots=slots, record=True)
    obs = sim.reset(seeds)
    mirror = Mirror(world, seeds)
    mirror.compare(sim, obs)
    for day in range(1, days + 1):
        obs, _, _ = sim.step(random_action(sim, rng, obs, fill=fill))
        mirror.play_day(sim, day)
        mirror.compare(sim, obs)
    return sim


def test_array_runs_are_the_simulators_day_by_day(world):
    sim = _play(world, 40, [1, 2, 3], slots=6, rng_seed=0)
    assert sim.done
    codes = sim.last_plan.slot_code
    assert (codes > 0).any()  # the random actions broke rules, and the runs still matched


def test_unsure_draws_take_the_simulators_rates_and_routine(world, monkeypatch):
    monkeypatch.setattr(kernel, "FAST_MARGIN", 2.0)  # every draw unsure: all go the exact way
    _play(world, 12, [4, 5], slots=5, rng_seed=1, fill=True)


def test_cn20_with_full_shelves_matches(monkeypatch):
    monkeypatch.chdir(ROOT)
    sim = _play("worlds/cn20", 8, [1, 2], slots=64, rng_seed=2, fill=True)
    assert (sim.state.slot_q > 0).sum() > 200  # wide blocks: the sums run over several pairwise blocks


def test_expected_demand_is_the_simulators_to_the_bit(monkeypatch):
    monkeypatch.chdir(ROOT)
    sim = _play("worlds/cn20", 6, [7], slots=64, rng_seed=3, fill=True)
    st = sim.state
    n, m, s = np.nonzero(st.slot_q > 0)
    k = st.slot_k[n, m, s].astype(np.int64)
    mine = expected_demand(sim.facts, st, n, m, k, st.slot_q[n, m, s])
    # the simulator that played the same days draws the same day
    mirror = Mirror("worlds/cn20", [7])
    for day in range(1, 7):
        mirror.play_day(sim, day)
    draw = episode_of(mirror.sessions[0]).sim.draw_demand()
    col = {int(c): j for j, c in enumerate(draw.cols)}
    row = {int(r): i for i, r in enumerate(draw.rows)}
    theirs = np.array([draw.rates[row[a], col[b]] for a, b in zip(m.tolist(), k.tolist(), strict=True)])
    assert len(mine) > 200 and np.array_equal(mine, theirs)

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


def test_a_product_given_back_after_an_earlier_machine_took_some_is_settled_in_turn(world):
    """Machine 0 (visited first) restocks product 0 while machine 1 (visited second) gives its older units of
    product 0 back: machine 0 gets the warehouse's units, not the ones given back after its turn."""
    sim = ArraySim(world, 1, slots=3, record=True)
    obs = sim.reset([3])
    mirror = Mirror(world, [3])
    M, K = world.n_machines, world.n_products

    def act(**parts):
        a = {"slot_product": obs["slot_product"].astype(np.int64), "slot_target": obs["slot_units"].astype(np.int64)}
        for key, value in parts.items():
            a[key] = value
        return a

    plan = []
    order = np.zeros((1, K), dtype=np.int64)
    order[0, 0] = 150
    plan.append(act(order=order))
    day = 1
    obs, _, _ = sim.step(plan[-1])
    mirror.play_day(sim, day)
    while obs["warehouse_units"][0, 0] == 0 or not obs["workday"][0]:  # wait for the first batch
        day += 1
        obs, _, _ = sim.step(act())
        mirror.play_day(sim, day)
    product, target = obs["slot_product"].astype(np.int64), obs["slot_units"].astype(np.int64)
    product[0, 1, 0], target[0, 1, 0] = 0, 150  # machine 1 takes the whole first batch
    visit = np.zeros((1, M), dtype=np.int64)
    visit[0, 1] = 1
    obs, _, _ = sim.step(act(visit=visit, slot_product=product, slot_target=target, order=order))
    day += 1
    mirror.play_day(sim, day)
    first_expiry = int(obs["slot_next_expiry"][0, 1, 0])
    while obs["in_transit"][0, 0] > 0 or not obs["workday"][0]:  # the second, later batch lands
        day += 1
        obs, _, _ = sim.step(act())
        mirror.play_day(sim, day)
    product, target = obs["slot_product"].astype(np.int64), obs["slot_units"].astype(np.int64)
    product[0, 0, 0], target[0, 0, 0] = 0, 3  # machine 0, visited first, restocks three
    product[0, 1, 0], target[0, 1, 0] = -1, 0  # machine 1, visited second, gives all of its units back
    visit[0, 0] = 1
    order_key = np.array([[0, 1] + [2] * (M - 2)])
    obs, _, _ = sim.step(act(visit=visit, visit_order=order_key, slot_product=product, slot_target=target))
    day += 1
    mirror.play_day(sim, day)
    mirror.compare(sim, obs)
    assert obs["slot_next_expiry"][0, 0, 0] > first_expiry  # machine 0 got the later batch
    assert obs["warehouse_next_expiry"][0, 0] == first_expiry  # the given-back units wait in the warehouse

"""The array baseline is the baseline: the same rules on arrays give the same days, to the fen."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from autovend.agents.array_baseline import ArrayBaseline
from autovend.agents.array_baseline.rows import fit_within, list_pos, shelf_targets
from autovend.agents.baseline import BaselineAgent, BaselineConfig
from autovend.agents.baseline.targets import fit_within as b_fit_within
from autovend.agents.baseline.targets import shelf_targets as b_shelf_targets
from autovend.arrays.core import ArraySim
from autovend.env.boundary import episode_of
from autovend.errors import ConfigError
from autovend.session import ToolSession
from autovend.world.bundle import as_world

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("seed", range(4))
def test_row_rules_are_the_baselines(seed):
    rng = np.random.default_rng(seed)
    R, S = 40, 24
    valid = rng.random((R, S)) < rng.uniform(0.2, 1.0, (R, 1))
    keys = np.stack([rng.permutation(200)[:S] for _ in range(R)])
    pos = list_pos(keys, valid)
    need = rng.exponential(rng.uniform(1, 30, (R, 1)), (R, S))
    rate = np.round(rng.exponential(1, (R, S)), int(rng.integers(0, 3)))  # rounding gives ties
    rate[rng.random((R, S)) < 0.1] = 0.0
    limit = np.floor(rng.exponential(40, (R, S)))
    room = rng.integers(-5, 250, R)
    fill = rng.random(R) < 0.7
    want_need = rng.integers(0, 30, (R, S))
    free = rng.integers(-3, 120, R)
    got = shelf_targets(need, rate, limit, valid, pos, room, 5, fill)
    fitted = fit_within(want_need, valid, pos, free)
    for i in range(R):
        ks = np.argsort(np.where(valid[i], keys[i], 10**9))[: valid[i].sum()]  # the list in its order
        assert np.array_equal(
            got[i, ks], b_shelf_targets(need[i, ks], rate[i, ks], limit[i, ks], int(room[i]), 5, bool(fill[i]))
        )
        assert not got[i][~valid[i]].any()
        assert np.array_equal(fitted[i, ks], b_fit_within(want_need[i, ks], int(free[i])))


def _array_closes(world, seeds: list[int], days: int) -> np.ndarray:
    sim = ArraySim(world, len(seeds), slots=64)
    policy = ArrayBaseline(world, len(seeds), 64)
    obs = sim.reset(seeds)
    closes = []
    for _ in range(days):
        obs, _, _ = sim.step(policy.act(obs))
        assert not any(np.count_nonzero(c) for c in (sim.last_plan.slot_code, sim.last_plan.discard_code))
        closes.append(sim.state.close.copy())
    return np.array(closes)  # (days, runs) fen


def _tool_closes(world, seed: int, days: int) -> list[int]:
    session = ToolSession(world, seed=seed)
    agent = BaselineAgent()
    agent.start(session)
    out = []
    for _ in range(days):
        agent.act_day(session)
        out.append(episode_of(session).sim.reports[-1].balance.net_assets_fen)
    return out


def test_the_array_baseline_plays_the_baselines_days():
    world = as_world(ROOT / "worlds" / "cn20")
    days = 40  # the opening, the first reviews and price trials, a holiday's long gap
    mine = _array_closes(world, [1, 2], days)
    for i, seed in enumerate([1, 2]):
        assert mine[:, i].tolist() == _tool_closes(world, seed, days)


@pytest.mark.slow
def test_the_array_baseline_ends_where_the_baseline_ends_on_seeds_1_to_3():
    world = as_world(ROOT / "worlds" / "cn20")
    mine = _array_closes(world, [1, 2, 3], world.horizon_days)
    theirs = [_tool_closes(world, s, world.horizon_days)[-1] for s in (1, 2, 3)]
    assert mine[-1].tolist() == theirs  # README: 274,304.79 / 302,310.68 / 295,052.50 CNY


def test_settings_the_array_baseline_cannot_follow_are_refused():
    with pytest.raises(ConfigError, match="memory_half_life_days"):
        ArrayBaseline(ROOT / "worlds" / "cn20", 1, 64, BaselineConfig(memory_half_life_days=30))


def test_a_machine_holds_no_more_products_than_the_env_has_slots():
    from autovend.agents.array_baseline.estimate import estimate
    from autovend.agents.array_baseline.review import SlotsFull
    from autovend.agents.array_baseline.serve import _clearance

    world = as_world(ROOT / "worlds" / "cn20")
    with pytest.raises(ValueError, match="opening assortment puts 40 products"):
        ArrayBaseline(world, 1, 30)
    sim = ArraySim(world, 1, slots=44)
    policy = ArrayBaseline(world, 1, 44)
    obs = sim.reset([1])
    with pytest.raises(SlotsFull, match="more than 44 products"):  # reviews add products: 44 slots are too few
        for _ in range(60):
            obs, _, _ = sim.step(policy.act(obs))
    # clearance puts a facing of uncarried stock on a machine while its room lasts, and its free slots
    policy = ArrayBaseline(world, 1, 64)
    book = policy.book
    est = estimate(book, policy.st, policy.config)
    K = len(policy.st.sku_ids)
    uncarried = np.setdiff1d(np.arange(K), book.pk[0][book.pk[0] >= 0])[:6]  # no machine carries them
    usable = np.zeros((1, K), dtype=np.int64)
    usable[0, uncarried[:5]] = 9
    free = np.flatnonzero(book.pk[0, 0] < 0)
    book.pk[0, 0, free[2:]] = uncarried[-1]  # all but two slots taken
    n, m = np.array([0]), np.array([0])
    order, qty = _clearance(est, n, m, usable, np.array([50]))
    assert (qty > 0).sum() == 2 and set(order[0][qty[0] > 0]) <= set(uncarried[:5].tolist())
    assert policy.slot_cuts.tolist() == [3]  # five products would go up, two slots are free

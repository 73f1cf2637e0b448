"""The slots' asked prices (`actions._prices`, compiled) are `price_fen`'s, checked against the band, to the fen."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from autovend.arrays.actions import CODE, _field, _one_slot_each, _prices, _whole, price_fen, read_action
from autovend.arrays.core import ArraySim
from autovend.world.model import Economics
from autovend.world.toy import toy_world
from tests.arrays.helpers import random_action


def _numpy_prices(ref, lo, hi, product, mult):
    """The numpy form the compiled pass replaced."""
    held = product >= 0
    finite = np.isfinite(mult)
    code = np.zeros(product.shape, dtype=np.int8)
    code[held & ~finite] = CODE["invalid_price"]
    k = np.where(held, product, 0)
    fen = price_fen(ref[k], mult)
    in_band = (fen >= lo[k]) & (fen <= hi[k])
    code[held & finite & ~in_band] = CODE["price_out_of_band"]
    out = np.full(product.shape, -1, dtype=np.int64)
    ok = held & finite & in_band
    out[ok] = fen[ok]
    return out, code


@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_prices_are_numpys(seed):
    rng = np.random.default_rng(seed)
    K, shape = 50, (3, 4, 16)
    ref = rng.integers(100, 2000, K)
    lo, hi = (ref * 0.5).astype(np.int64), (ref * 1.5).astype(np.int64)
    facts = SimpleNamespace(ref_fen=ref, lo_fen=lo, hi_fen=hi)
    product = rng.integers(-1, K, shape).astype(np.int32)
    k = np.maximum(product, 0)
    half = (np.floor(ref[k] * 0.9) + 0.5) / ref[k]  # multipliers that land on half a fen (and float noise)
    mult = np.select(
        [rng.random(shape) < 0.25, rng.random(shape) < 0.1, rng.random(shape) < 0.1],
        [half + rng.choice([-1e-12, 0.0, 1e-12], shape), rng.choice([np.nan, np.inf, -np.inf], shape),
         rng.choice([-3.0, 0.0, 1e20, 2.0], shape)],
        rng.uniform(0.3, 1.8, shape),
    )  # fmt: skip
    state = SimpleNamespace()
    got = _prices(facts, state, {"slot_price": mult}, product)
    want = _numpy_prices(ref, lo, hi, product, mult)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert (want[1] == CODE["invalid_price"]).any() and (want[1] == CODE["price_out_of_band"]).any()
    assert (want[0] > 0).sum() > 50


def test_no_prices_asked_leaves_every_slot_unpriced():
    facts = SimpleNamespace(ref_fen=np.array([100]), lo_fen=np.array([50]), hi_fen=np.array([150]))
    out, code = _prices(facts, SimpleNamespace(), {}, np.zeros((1, 1, 2), dtype=np.int32))
    assert out.tolist() == [[[-1, -1]]] and not code.any()


def _numpy_slots(K, cur_k, cur_q, asked, visit, action):
    """The slot checks of `read_action` as numpy (the form the compiled passes replaced)."""
    N, M, S = cur_k.shape
    slot_code = np.zeros((N, M, S), dtype=np.int8)
    ask_k, k_ok = _whole(_field(action, "slot_product", (N, M, S), cur_k))
    k_ok &= (ask_k >= -1) & (ask_k < K)
    slot_code[~k_ok] = CODE["unknown_sku"]
    ask_t, t_ok = _whole(_field(action, "slot_target", (N, M, S), cur_q))
    t_ok &= ask_t >= 0
    slot_code[k_ok & ~t_ok] = CODE["invalid_qty"]
    good = k_ok & t_ok
    product = np.where(good, ask_k, cur_k).astype(np.int32)
    target = np.where(good, np.where(product >= 0, ask_t, 0), cur_q)
    changes = (product != cur_k) | (target != cur_q)
    here = visit[:, :, None]
    stay = changes & ~here
    why = np.broadcast_to(np.where(asked, CODE["not_workday"], CODE["no_visit"])[:, :, None], stay.shape)
    quiet = stay & (slot_code == 0)
    slot_code[quiet] = why[quiet]
    product = np.where(here, product, cur_k).astype(np.int32)
    target = np.where(here & good, target, cur_q)
    product, target = _one_slot_each(product, target, cur_k, cur_q, slot_code)
    waste, w_ok = _whole(_field(action, "slot_waste", (N, M, S), 0))
    w_ok &= waste >= 0
    slot_code[~w_ok & (slot_code == 0)] = CODE["invalid_qty"]
    waste = np.where(w_ok & here, waste, 0)
    remove, r_ok = _whole(_field(action, "slot_remove", (N, M, S), 0))
    r_ok &= remove >= 0
    slot_code[~r_ok & (slot_code == 0)] = CODE["invalid_qty"]
    over = r_ok & here & (remove > cur_q)
    slot_code[over & (slot_code == 0)] = CODE["insufficient_shelf_stock"]
    remove = np.where(r_ok & here, np.minimum(remove, cur_q), 0)
    return product, target, waste, remove, slot_code


@pytest.mark.parametrize("seed", range(3))
def test_the_compiled_slot_checks_are_numpys(seed):
    rng = np.random.default_rng(seed)
    sim = ArraySim(toy_world(3, 12, seed=2, economics=Economics(horizon_days=20)), 2, slots=5)
    obs = sim.reset([1, 2])
    for _ in range(8):  # orders land and shelves fill
        obs, _, _ = sim.step(random_action(sim, rng, obs, fill=True))
    while not sim.facts.workday[sim.state.day]:  # a working day: visits carry out their slots' asks
        obs, _, _ = sim.step(random_action(sim, rng, obs, fill=True))
    st, K = sim.state, sim.facts.n_products
    shape = st.slot_k.shape
    seen: set = set()  # what the trials exercised
    for trial in range(20):
        action = random_action(sim, rng, obs)
        bad = rng.random(shape)
        action["slot_product"] = np.where(
            bad < 0.1, rng.choice([1.5, np.nan, -3.0, 1e30], shape), action["slot_product"]
        )
        action["slot_target"] = np.where(bad > 0.9, rng.choice([2.5, -np.inf, -1.0], shape), action["slot_target"])
        action["slot_remove"] = rng.choice([0, 0, 1, 3, 50, -1], shape) if trial % 2 else rng.uniform(-1, 9, shape)
        action["slot_waste"] = np.where(rng.random(shape) < 0.1, -2, action["slot_waste"])
        if trial % 3 == 0:  # a product asked twice at a machine
            action["slot_product"][0, 0, :2] = 1
        plan = read_action(sim.facts, st, action)
        asked = action["visit"] != 0
        visit = asked & bool(sim.facts.workday[st.day])
        want = _numpy_slots(K, st.slot_k, st.slot_q, asked, visit, action)
        got = (plan.product, plan.target, plan.waste, plan.remove, plan.slot_code)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and np.array_equal(g, w)
        seen |= {int(c) for c in np.unique(want[4])} | ({"removed"} if (want[3] > 0).any() else set())
    assert {"removed", CODE["insufficient_shelf_stock"], CODE["no_visit"], CODE["invalid_qty"]} <= seen

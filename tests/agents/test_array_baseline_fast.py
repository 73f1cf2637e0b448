"""The array baseline's fast paths give what the plain computations they stand for give, bit for bit."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from autovend.agents.array_baseline import ArrayBaseline
from autovend.agents.array_baseline.estimate import RowGain, _carried_sorted, band_fen, clip_fen, estimate, price_fen
from autovend.agents.array_baseline.orders import clean
from autovend.agents.array_baseline.policy import slot_action
from autovend.agents.array_baseline.review import top, top_sorted
from autovend.agents.array_baseline.rows import LAST, _first_in_order, list_order
from autovend.agents.array_baseline.targets import carried_order, levels
from autovend.agents.baseline.config import BaselineConfig
from autovend.arrays.core import ArraySim
from autovend.world.bundle import as_world

ROOT = Path(__file__).resolve().parents[2]


def _plain_top(score: np.ndarray, valid: np.ndarray, count: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    cols = np.zeros((len(score), width), dtype=np.int64)
    ok = np.zeros((len(score), width), dtype=bool)
    for r in range(len(score)):
        picks = sorted((-score[r, c], c) for c in np.flatnonzero(valid[r]))[: min(int(count[r]), width)]
        for j, (_, c) in enumerate(picks):
            cols[r, j], ok[r, j] = c, True
    return cols, ok


def test_top_takes_the_best_valid_columns_ties_to_the_lower_one():
    rng = np.random.default_rng(0)
    for trial in range(400):
        R, K = int(rng.integers(1, 9)), int(rng.integers(1, 40))
        score = np.round(rng.normal(size=(R, K)), int(rng.integers(0, 3)))  # rounding gives ties
        valid = rng.random((R, K)) < rng.uniform(0.0, 1.0)
        count = rng.integers(0, 12 if trial % 2 else 4, R)
        width = min(int(count.max()), K)
        cols, ok = top(score, valid, count)
        want = _plain_top(score, valid, count, width)
        assert np.array_equal(cols, want[0]) and np.array_equal(ok, want[1])
        if width:  # the one-at-a-time picks and the partial sort agree
            key = np.where(valid, -score, np.inf)
            got = top_sorted(key, valid, count, width)
            assert np.array_equal(cols, got[0]) and np.array_equal(ok, got[1])


def test_top_with_scores_that_are_not_finite_is_the_partial_sorts():
    rng = np.random.default_rng(1)
    widths = set()
    for trial in range(1200):
        R, K = int(rng.integers(1, 6)), int(rng.integers(1, 12))
        values = np.array([0.0, -0.0, 1.0, 2.0, 0.5, np.inf, -np.inf, np.nan])
        p = np.full(len(values), 1.0)
        p[-1] = [1.0, 20.0, 200.0][trial % 3]  # rows mostly NaN: fewer numbers than picks
        score = rng.choice(values, (R, K), p=p / p.sum())
        valid = rng.random((R, K)) < rng.uniform(0.3, 1.0)
        count = rng.integers(0, K + 2, R)
        width = min(int(count.max()), K)
        cols, ok = top(score, valid, count)
        assert cols.shape == ok.shape == (R, width)
        if width:
            want = top_sorted(np.where(valid, -score, np.inf), valid, count, width)
            assert np.array_equal(cols, want[0]) and np.array_equal(ok, want[1])
            widths.add(
                (width == K, bool(np.isnan(score[valid]).any()), bool(ok.sum() < np.minimum(count, width).sum()))
            )
    assert len(widths) == 8  # full and partial widths, with and without NaN, with rows short of picks


def test_prices_with_their_bounds_kept_are_price_fen():
    rng = np.random.default_rng(2)
    ref = rng.integers(1, 3000, 500)
    pct = rng.integers(50, 250, 500)
    band = (0.7, 2.0)
    assert np.array_equal(clip_fen(pct, ref, *band_fen(ref, band)), price_fen(pct, ref, band))


def _day_one():
    world = as_world(ROOT / "worlds" / "cn20")
    policy = ArrayBaseline(world, 2, 64)
    return policy, estimate(policy.book, policy.st, policy.config)


def test_a_slots_rate_follows_its_product_through_the_day():
    policy, est = _day_one()
    book = policy.book
    n, m = np.array([0, 1]), np.array([3, 3])
    before = est.slot_mu(n, m)
    s = int(np.flatnonzero(book.pk[0, 3] < 0)[0])  # a free slot of machine 3
    old = int(book.pk[0, 3, 0])
    k = int(np.setdiff1d(np.arange(len(policy.st.sku_ids)), book.pk[0, 3])[0])
    book.pk[0, 3, s], book.pk[0, 3, 0] = k, k + 1 if k + 1 not in book.pk[0, 3] else k + 2
    for _ in range(2):  # placed since the day began: the product's own rate, asked twice
        got = est.slot_mu(n, m)
        assert got[0, s] == est.mu(np.array([0]), np.array([3]), np.array([k]))[0]
        assert got[0, 0] == est.mu(np.array([0]), np.array([3]), book.pk[0, 3, :1])[0]
        assert np.array_equal(got[1], before[1])
    book.pk[0, 3, s], book.pk[0, 3, 0] = -1, old  # back as the day began
    assert np.array_equal(est.slot_mu(n, m), before)
    N, M, _ = book.pk.shape
    every = np.repeat(np.arange(N), M), np.tile(np.arange(M), N)  # every row, in order: read from views
    k2 = int(np.setdiff1d(np.arange(len(policy.st.sku_ids)), book.pk[1, 7])[0])
    book.pk[1, 7, s] = k2
    whole = est.slot_mu(*every)
    assert whole[M + 7, s] == est.mu(np.array([1]), np.array([7]), np.array([k2]))[0]
    order = np.random.default_rng(0).permutation(N * M)  # the same rows out of order: gathered
    assert np.array_equal(est.slot_mu(every[0][order], every[1][order]), whole[order])


def test_what_the_book_keeps_is_what_it_would_work_out_again():
    world = as_world(ROOT / "worlds" / "cn20")
    sim = ArraySim(world, 2, slots=64)
    policy = ArrayBaseline(world, 2, 64)
    obs = sim.reset([1, 2])
    book = policy.book
    K = len(policy.st.sku_ids)
    n, m = np.repeat(np.arange(2), 20), np.tile(np.arange(20), 2)
    for _ in range(35):  # the opening, the first reviews (products added and dropped), clearance
        obs, _, _ = sim.step(policy.act(obs))
        kept = book.list_order(n, m)
        fresh = list_order(book.pk[n, m], book.active[n, m])
        assert np.array_equal(kept[0], fresh[0]) and np.array_equal(kept[1], fresh[1])
        an, am, a_s = np.nonzero(book.active)  # the carried products sorted by run, machine and product
        ak = book.pk[an, am, a_s]
        by = np.argsort((an * 20 + am) * K + ak)
        got = _carried_sorted(book, K)
        assert all(np.array_equal(g, w[by]) for g, w in zip(got, (an, am, ak, a_s), strict=True))
        est = estimate(book, policy.st, policy.config)  # the day's first rates: the carried ones' reused
        r, s = np.nonzero(book.pk[n, m] >= 0)
        assert np.array_equal(est.slot_mu(n, m)[r, s], est.mu(n[r], m[r], book.pk[n[r], m[r], s]))


def test_the_first_in_order_are_the_stable_sorts_first():
    rng = np.random.default_rng(4)
    for _ in range(300):
        R, S = int(rng.integers(1, 7)), int(rng.integers(1, 20))
        eligible = rng.random((R, S)) < 0.6
        rank = np.stack([rng.permutation(S) for _ in range(R)])
        rank[rng.random((R, S)) < 0.2] = LAST
        want = np.argsort(np.where(eligible, rank, LAST), axis=-1, kind="stable")
        take = rng.integers(0, S + 1, R)
        got = _first_in_order(eligible, rank, take)
        e_sorted = np.take_along_axis(eligible, want, axis=-1)
        expect = np.zeros_like(eligible)
        np.put_along_axis(expect, want, e_sorted & (np.cumsum(e_sorted, axis=-1) <= take[:, None]), axis=-1)
        assert np.array_equal(got, expect)


def test_a_sale_comes_off_the_policy_slot_that_holds_the_product():
    policy, _ = _day_one()
    book = policy.book
    N, M, S = book.pk.shape
    book.shelf[...] = 9
    k0, k1 = int(book.pk[0, 2, 0]), int(book.pk[0, 2, 1])
    obs = {key: np.zeros((N, M, S)) for key in ("slot_sold", "slot_revenue", "slot_cogs")}
    obs["slot_product"] = book.pk.astype(np.int32).copy()
    obs["slot_sold"][0, 2, 0] = 2  # where the policy has it
    obs["slot_product"][0, 2, 5], obs["slot_sold"][0, 2, 5] = k1, 3  # the env's slot 5 sold k1: policy slot 1
    book.sync_sales(obs, 1, policy.config.window_days, np.arange(len(policy.st.sku_ids)))
    assert book.shelf[0, 2, :6].tolist() == [7, 6, 9, 9, 9, 9] and k0 != k1


def test_the_cycles_levels_at_every_horizon_are_each_horizons_levels():
    policy, est = _day_one()
    est.scale = est.scale * np.geomspace(0.05, 30.0, est.scale.size).reshape(est.scale.shape)  # slow and fast sellers
    n, m = np.repeat(np.arange(2), 20), np.tile(np.arange(20), 2)
    act, k, _, _ = carried_order(est, n, m)
    days = np.arange(1, 8)
    safety = np.arange(len(n)) % 3 > 0
    need, limit, mu = levels(est, n, m, k, days[:, None, None], safety, act)  # the horizons at once
    for h, d in enumerate(days):
        one = levels(est, n, m, k, np.full((len(n), 1), d), safety, act)
        assert np.array_equal(need[h], one[0]) and np.array_equal(limit, one[1]) and np.array_equal(mu, one[2])
    assert 0.2 < (mu[act] * 7 > 5).mean() < 0.9  # products whose mean need passes the facing, and others


def test_a_rows_gain_is_the_prior_times_the_margin_of_each_product():
    policy, est = _day_one()
    n, m = np.array([0, 1, 1]), np.array([4, 4, 17])
    K = len(policy.st.sku_ids)
    gain = RowGain(est, n, m)
    nn, mm, kk = np.repeat(n, K), np.repeat(m, K), np.tile(np.arange(K), len(n))
    want = (est.prior(nn, mm, kk) * est.margin(nn, mm, kk)).reshape(len(n), K)
    assert np.array_equal(gain(), want) and np.array_equal(gain(np.array([False, True, True])), want[1:])


def test_the_actions_slots_and_prices_are_the_numpy_forms():
    rng = np.random.default_rng(11)
    N, M, S, K = 3, 5, 8, 40
    served = rng.random((N, M)) < 0.5
    pk = np.where(rng.random((N, M, S)) < 0.3, -1, rng.integers(0, K, (N, M, S)))
    shelf = rng.integers(0, 9, (N, M, S))
    env_k = np.where(rng.random((N, M, S)) < 0.3, -1, rng.integers(0, K, (N, M, S))).astype(np.int32)
    env_units = rng.integers(0, 9, (N, M, S)).astype(np.int32)
    pct = rng.choice([80, 95, 100, 105, 120, 300], (N, M))
    ref = rng.integers(150, 2500, K)
    band = (0.7, 1.5)
    lo, hi = band_fen(ref, band)
    product, target, price = np.empty((N, M, S), np.int64), np.empty((N, M, S), np.int64), np.empty((N, M, S))
    slot_action(served, pk, shelf, env_k, env_units, pct, ref, lo, hi, product, target, price)
    # the numpy form
    want_product = np.where(served[:, :, None], pk, env_k).astype(np.int64)
    want_target = np.where(served[:, :, None], np.where(pk >= 0, shelf, 0), env_units).astype(np.int64)
    held = want_product >= 0
    k = np.where(held, want_product, 0)
    want_price = np.where(held, clip_fen(pct[:, :, None], ref[k], lo[k], hi[k]) / ref[k], 1.0)
    assert np.array_equal(product, want_product) and np.array_equal(target, want_target)
    assert [x.hex() for x in price.ravel()] == [float(x).hex() for x in want_price.ravel()]
    assert (want_price > 1.0).any() and (want_price < 1.0).any() and (clip_fen(300, ref, lo, hi) == hi).all()


def _numpy_clean(carriers, inactive_since, st, cfg, d, wh):
    """`orders.clean` as numpy (the form the compiled pass replaced)."""
    carried = carriers > 0
    inactive_since[carried] = 0
    inactive_since[~carried & (inactive_since == 0)] = d
    idle = d - inactive_since >= cfg.dead_stock_days
    dead = ~carried & (inactive_since > 0) & idle & (wh["good"] > 0)
    qty = wh["expired"] + wh["expiring"]
    expires_first = (wh["next_expiry"] > 0) & (wh["next_expiry"] <= st.horizon)
    costly = expires_first | (st.rent * (st.horizon - d + 1) > st.cost)[None, :]
    qty = np.where(dead & costly, wh["units"], qty)
    units = wh["units"] - qty
    gone = qty > 0
    return qty, units, np.where(gone, 0, wh["expired"]), np.where(gone, 0, wh["expiring"])


@pytest.mark.parametrize("d", [30, 170])
def test_the_warehouse_clean_is_the_numpy_form(d):
    rng = np.random.default_rng(d)
    N, K = 4, 60
    cfg = BaselineConfig()
    st = SimpleNamespace(rent=0.05, horizon=180, cost=rng.uniform(0.5, 20.0, K))
    carriers = rng.integers(0, 3, (N, K)) * (rng.random((N, K)) < 0.4)
    since = rng.choice([0, 0, 1, d - 25, d - 5, d], (N, K))
    units = rng.integers(0, 30, (N, K))
    expired = np.minimum(units, rng.integers(0, 4, (N, K)))
    expiring = np.minimum(units - expired, rng.integers(0, 4, (N, K)))
    wh = {"units": units, "expired": expired, "expiring": expiring, "good": units - expired - expiring,
          "next_expiry": rng.choice([0, d + 3, 179, 181, 400], (N, K))}  # fmt: skip
    want_since = since.copy()
    want = _numpy_clean(carriers, want_since, st, cfg, d, wh)
    book = SimpleNamespace(carriers=carriers, inactive_since=since.copy())
    got_wh = dict(wh)
    qty = clean(book, st, cfg, d, got_wh)  # type: ignore[arg-type]
    assert np.array_equal(qty, want[0]) and np.array_equal(book.inactive_since, want_since)
    assert all(np.array_equal(got_wh[k], w) for k, w in zip(("units", "expired", "expiring"), want[1:], strict=True))
    assert np.array_equal(got_wh["good"], want[1]) and (want[0] == units).any() and (want[0] == 0).any()

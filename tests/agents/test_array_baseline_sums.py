"""The compiled sums of the array baseline (the orders', the pooled index's) are np.bincount's, to the bit."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.agents.array_baseline.estimate import estimate
from autovend.agents.array_baseline.order_kernel import carried_sums
from autovend.agents.array_baseline.pool_kernel import machine_sums, pooled_sums
from autovend.arrays.kernel import dense_row_sums
from tests.agents.array_played import played_policy


@pytest.fixture(scope="module")
def played():
    return played_policy(30)  # products on trial and proven, dropped and selling down


def _args(policy, level, lead=5.0):
    book, st, cfg = policy.book, policy.st, policy.config
    est = estimate(book, st, cfg)
    N, M, S = book.pk.shape
    table, row = est.margin_table()
    nn, mm = np.repeat(np.arange(N), M), np.tile(np.arange(M), N)
    mu = est.slot_mu(nn, mm).reshape(N, M, S)
    return est, (book.pk, level, mu, book.index, book.ce, float(cfg.min_trial_days), lead, est.r, table, row,
                 book.shelf)  # fmt: skip


def test_the_sums_are_the_bincounts_of_the_carried_slots(played):
    book, cfg = played.book, played.config
    N, M, S = book.pk.shape
    K = len(played.st.sku_ids)
    level = np.random.default_rng(0).integers(0, 30, book.pk.shape)
    est, args = _args(played, level, lead=5.0)
    cell = np.flatnonzero(book.active)
    live, count, sums = carried_sums(book.active, *args)
    row = cell // S
    n, m = np.divmod(row, M)
    k = book.pk.reshape(-1)[cell]
    col = n * K + k
    want_count = np.bincount(col, minlength=N * K)
    want_live = np.flatnonzero(want_count)
    mu = est.slot_mu(np.repeat(np.arange(N), M), np.tile(np.arange(M), N)).reshape(-1)[cell]
    p = book.index.reshape(-1)[row * K + k].astype(np.int64)
    trial = book.ce.reshape(-1)[row * book.ce.shape[2] + p] < cfg.min_trial_days
    plan = np.where(trial, 0.0, mu)
    mean = plan * 5.0
    weights = [level.reshape(-1)[cell], mu, plan, mean + mean**2 / est.r[n, m], est.margin(n, m, k),
               book.shelf.reshape(-1)[cell]]  # fmt: skip
    assert np.array_equal(live, want_live) and np.array_equal(count, want_count[want_live])
    for got, w in zip(sums, weights, strict=True):
        want = np.bincount(col, weights=w, minlength=N * K)[want_live]
        assert [x.hex() for x in got] == [float(x).hex() for x in want]
    assert 0 < trial.sum() < len(trial) and len(live) > 100  # products on trial and proven, many columns


def test_a_carried_slot_without_a_product_is_refused(played):
    book = played.book
    _, args = _args(played, np.zeros(book.pk.shape, dtype=np.int64))
    active = book.active.copy()
    active[np.unravel_index(np.flatnonzero(book.pk.reshape(-1) < 0)[0], book.pk.shape)] = True
    with pytest.raises(ValueError, match="no product of the catalog"):
        carried_sums(active, *args)


def _hexes(a):
    return [float(x).hex() for x in np.ravel(a)]


def test_the_pooled_sums_are_the_bincounts_of_the_entries(played):
    book, st, cfg = played.book, played.st, played.config
    N, M, P = book.ek.shape
    K = len(st.sku_ids)
    n, m, p, k = book.sorted_entries()
    flat = (n * M + m) * P + p
    cu, ce = book.cu.ravel()[flat], book.ce.ravel()[flat]
    row = n * M + m
    ce_row = dense_row_sums(row, k, ce, K, N * M)
    ce_row[[3, 7]] = 0.0  # machines not yet exposed: the fallback level
    fallback, sp = 0.37, cfg.site_prior_days
    f, adj_k, ce_k = pooled_sums(n, m, k, cu, ce, ce_row, st.site, st.l1, st.n_site, st.n_l1, M, K, N, fallback, sp)
    # the plain computation (the numpy form of `pooled_index` over entries)
    cu_row = np.bincount(row, weights=cu, minlength=N * M)
    base = np.where(ce_row > 0, cu_row / np.maximum(ce_row, 1e-9), fallback)
    rel = cu / np.maximum(base, 1e-9)[row]
    n_sl = st.n_site * st.n_l1
    group = n * n_sl + st.site[m] * st.n_l1 + st.l1[k]
    want_f = (np.bincount(group, weights=rel, minlength=N * n_sl) + sp) / (
        np.bincount(group, weights=ce, minlength=N * n_sl) + sp
    )
    col = n * K + k
    want_adj = np.bincount(col, weights=rel / want_f[group], minlength=N * K)
    want_ce = np.bincount(col, weights=ce, minlength=N * K)
    assert _hexes(f) == _hexes(want_f) and _hexes(adj_k) == _hexes(want_adj) and _hexes(ce_k) == _hexes(want_ce)
    assert len(np.unique(group)) > 20 and len(np.unique(col)) > 100
    with pytest.raises(ValueError, match="out of range"):
        pooled_sums(n, m + M, k, cu, ce, ce_row, st.site, st.l1, st.n_site, st.n_l1, M, K, N, fallback, sp)


def test_the_machines_window_sums_are_the_bincounts_of_the_gathered_entries(played):
    book = played.book
    N, M, P = book.ek.shape
    n, m, p, _ = book.sorted_entries()
    row = n * M + m
    flat = row * P + p
    units, expo = np.zeros(N * M), np.zeros(N * M)
    machine_sums(row, flat, book.wu.reshape(-1), book.we.reshape(-1), units, expo)
    want_units = np.bincount(row, weights=book.wu.ravel()[flat], minlength=N * M)
    want_expo = np.bincount(row, weights=book.we.ravel()[flat], minlength=N * M)
    assert [x.hex() for x in units] == [float(x).hex() for x in want_units]
    assert [x.hex() for x in expo] == [float(x).hex() for x in want_expo]
    assert (units > 0).sum() > 30 and (expo > 0).sum() > 30


def _numpy_slot_mu(est, n, m):
    """`Est.slot_mu` as numpy gathers (the form the compiled walks replaced), on a fresh day's estimates."""
    book = est.book
    held = book.pk >= 0
    a, b, c = np.nonzero(held)
    k = book.pk[a, b, c]
    attr = np.empty(len(a))
    new = est._carried_attr[0][a, b, c] != k
    attr[~new] = est._carried_attr[1][a, b, c][~new]
    attr[new] = est.attr(a[new], b[new], k[new])
    day = np.zeros(book.pk.shape)
    day[a, b, c] = attr * est.scale[a, b]
    return day  # the rates as the day began; products placed since get est.mu


def test_the_slots_rates_are_the_numpy_forms_before_and_after_products_move(played):
    book, st, cfg = played.book, played.st, played.config
    est = estimate(book, st, cfg)
    N, M, S = book.pk.shape
    day = _numpy_slot_mu(est, None, None)
    rows = np.arange(N * M)
    n, m = rows // M, rows % M
    got = est.slot_mu(n, m)
    assert [x.hex() for x in got.ravel()] == [float(x).hex() for x in day.reshape(N * M, S).ravel()]
    # a product placed on an empty slot and another swapped in: their own rates, the rest as the day began
    pk0 = book.pk.copy()
    try:
        free = np.argwhere(book.pk[1, 3] < 0)[0, 0]
        held = np.argwhere(book.pk[2, 5] >= 0)[0, 0]
        unused = np.flatnonzero(book.index[1, 3] < 0)[0]
        book.pk[1, 3, free] = unused
        book.pk[2, 5, held] = np.flatnonzero(book.index[2, 5] < 0)[1]
        sel_n, sel_m = np.array([2, 1, 1, 0]), np.array([5, 3, 3, 0])  # a row twice
        got = est.slot_mu(sel_n, sel_m)
        want = np.where(book.pk[sel_n, sel_m] >= 0, day[sel_n, sel_m], 0.0)
        want[1, free] = want[2, free] = est.mu(np.array([1]), np.array([3]), np.array([unused]))[0]
        want[0, held] = est.mu(np.array([2]), np.array([5]), book.pk[2, 5, held : held + 1])[0]
        assert [x.hex() for x in got.ravel()] == [float(x).hex() for x in want.ravel()]
        again = est.slot_mu(sel_n, sel_m)  # kept: the same values, nothing worked out again
        assert [x.hex() for x in again.ravel()] == [float(x).hex() for x in want.ravel()]
    finally:
        book.pk[...] = pk0

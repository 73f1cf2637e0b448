"""The exact kernels of the array simulator: numpy's row sums from the non-zero entries, and Poisson quantiles."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.arrays import kernel
from autovend.arrays.kernel import block_row_sums, exact_quantiles, poisson_quantiles
from autovend.demand.kernel import demand_from_uniforms


@pytest.mark.parametrize("seed", range(6))
def test_block_row_sums_are_numpys_sums_of_the_rows(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        R, C = int(rng.integers(1, 25)), int(rng.integers(1, 1600))  # short rows, one block, many blocks
        density = rng.uniform(0.005, 0.6)
        x = rng.random((R, C)) * (rng.random((R, C)) < density) * 10.0 ** rng.uniform(-4, 3, (R, C))
        r, p = np.nonzero(x)
        got = block_row_sums(r, p, x[r, p], np.full(R, C), R)
        assert np.array_equal(got, x.sum(axis=-1))  # to the bit, where a plain running sum is not


def test_a_running_sum_differs_from_numpys_so_the_emulation_matters():
    rng = np.random.default_rng(0)
    x = rng.random((200, 700)) * (rng.random((200, 700)) < 0.1)
    running = np.array([sum(row.tolist()) for row in x])
    assert (running != x.sum(axis=-1)).sum() > 50


def test_block_row_sums_take_each_rows_own_length():
    rng = np.random.default_rng(3)
    lengths = np.array([1, 7, 8, 9, 128, 129, 300, 1372])
    rows, pos, val, want = [], [], [], []
    for i, L in enumerate(lengths):
        x = rng.random(L) * (rng.random(L) < 0.3)
        x[-1] = 0.5  # the last entry always present
        nz = np.flatnonzero(x)
        rows += [i] * len(nz)
        pos += nz.tolist()
        val += x[nz].tolist()
        want.append(x.sum())
    got = block_row_sums(np.array(rows), np.array(pos), np.array(val), lengths, len(lengths) + 1)
    assert np.array_equal(got[:-1], np.array(want)) and got[-1] == 0.0


@pytest.mark.parametrize("scale", [0.01, 0.3, 2.0, 25.0, 400.0])
def test_quantiles_are_the_simulators(scale):
    rng = np.random.default_rng(int(scale * 100))
    lam = rng.exponential(scale, 200_000) * (rng.random(200_000) < 0.95)
    u = rng.random(200_000)
    assert np.array_equal(exact_quantiles(u, lam), demand_from_uniforms(u, lam))


def test_uniforms_on_a_cdf_step_go_to_the_exact_routine():
    rng = np.random.default_rng(1)
    lam = rng.exponential(1.0, 10_000)
    on_step = np.exp(-lam) * (1 + lam)  # P(N <= 1)
    fast, unsure = poisson_quantiles(on_step, lam)
    assert unsure.all() and not fast.any()
    assert np.array_equal(exact_quantiles(on_step, lam), demand_from_uniforms(on_step, lam))


def test_a_rate_off_in_its_last_bits_gives_the_same_sure_draws():
    rng = np.random.default_rng(2)
    lam = rng.exponential(0.5, 100_000)
    u = rng.random(100_000)
    nudged = lam * (1 + 4 * np.finfo(float).eps)
    a, ua = poisson_quantiles(u, lam)
    b, ub = poisson_quantiles(u, nudged)
    sure = ~ua & ~ub
    assert sure.mean() > 0.999
    assert np.array_equal(a[sure], demand_from_uniforms(u, nudged)[sure]) and np.array_equal(a[sure], b[sure])


def test_the_fast_path_is_bounded_by_its_terms(monkeypatch):
    monkeypatch.setattr(kernel, "FAST_TERMS", 3)
    lam = np.full(1000, 5.0)
    u = np.linspace(0.001, 0.999, 1000)
    out, unsure = poisson_quantiles(u, lam)
    assert unsure[out == 0].sum() > 0 and (out <= 2).all()
    assert np.array_equal(exact_quantiles(u, lam), demand_from_uniforms(u, lam))

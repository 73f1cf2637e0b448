"""Forward-backward of the availability chains, checked against brute force: every path of a short chain enumerated."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from autovend.calibration.hmm import ABSENT, N_STATES, ON, OUT, Chains, forward_backward

T_A = np.array([[0.8, 0.15, 0.05], [0.4, 0.55, 0.05], [0.1, 0.0, 0.9]])
T_B = np.array([[0.6, 0.3, 0.1], [0.5, 0.45, 0.05], [0.2, 0.0, 0.8]])
INIT = np.array([[0.6, 0.1, 0.3], [0.3, 0.3, 0.4]])


def _emission(sold: bool, rate: float, state: int) -> float:
    if state == ON:
        return 1.0 if sold else float(np.exp(-rate))
    return 0.0 if sold else 1.0


def _brute(sold: np.ndarray, rate: np.ndarray, T: np.ndarray, init: np.ndarray) -> dict:
    """Posteriors, leave-one-out posteriors, transition counts and likelihood of one chain, by enumeration."""
    n = len(sold)
    weights = {}
    for path in itertools.product(range(N_STATES), repeat=n):
        w = init[path[0]] * _emission(sold[0], rate[0], path[0])
        for t in range(1, n):
            w *= T[path[t - 1], path[t]] * _emission(sold[t], rate[t], path[t])
        weights[path] = w
    total = sum(weights.values())
    on = np.array([sum(w for p, w in weights.items() if p[t] == ON) for t in range(n)]) / total
    counts = np.zeros((N_STATES, N_STATES))
    for p, w in weights.items():
        for t in range(1, n):
            counts[p[t - 1], p[t]] += w / total
    first = np.array([sum(w for p, w in weights.items() if p[0] == s) for s in range(N_STATES)]) / total
    loo = np.empty(n)
    for t in range(n):  # the same sums with day t's emission left out
        num = den = 0.0
        for path in itertools.product(range(N_STATES), repeat=n):
            w = init[path[0]] * (_emission(sold[0], rate[0], path[0]) if t != 0 else 1.0)
            for s in range(1, n):
                w *= T[path[s - 1], path[s]] * (_emission(sold[s], rate[s], path[s]) if s != t else 1.0)
            den += w
            num += w if path[t] == ON else 0.0
        loo[t] = num / den
    return {"on": on, "loo": loo, "counts": counts, "first": first, "loglik": float(np.log(total))}


@pytest.fixture(scope="module")
def chains():
    """Three chains of lengths 5, 4 and 2 (sorted longest first), laid out in another order in the flat arrays."""
    rng = np.random.default_rng(7)
    lengths = np.array([5, 4, 2])
    offset = np.array([6, 0, 4])  # chain 0 (length 5) at 6..10, chain 1 at 0..3, chain 2 at 4..5
    group = np.array([0, 1, 0])
    n = 11
    sold = rng.random(n) < 0.35
    rate = rng.uniform(0.1, 2.5, n)
    return Chains(offset, lengths, group), sold, rate


def test_forward_backward_equals_enumerating_every_path(chains):
    ch, sold, rate = chains
    T = np.stack([T_A, T_B])
    post = forward_backward(ch, sold, rate, T, INIT, 2)
    counts = np.zeros((2, N_STATES, N_STATES))
    first = np.zeros((2, N_STATES))
    loglik = 0.0
    for c in range(3):
        at = ch.offset[c] + np.arange(ch.length[c])
        g = ch.group[c]
        want = _brute(sold[at], rate[at], T[g], INIT[g])
        np.testing.assert_allclose(post.on[at], want["on"], rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(post.on_loo[at], want["loo"], rtol=1e-12, atol=1e-14)
        counts[g] += want["counts"]
        first[g] += want["first"]
        loglik += want["loglik"]
    np.testing.assert_allclose(post.transitions, counts, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(post.initial, first, rtol=1e-12)
    assert post.loglik == pytest.approx(loglik, rel=1e-12)


def test_a_day_with_a_sale_is_on_and_a_long_zero_run_of_a_fast_seller_is_not():
    """Rate 3 a day: five days without a sale are far likelier a sell-out than bad luck (exp(-15) if ON throughout).

    Each day of the run stays ON only with the odds of one more unlucky day (exp(-3) = 0.05) at its ends.
    """
    n = 8
    sold = np.array([True, False, False, False, False, False, True, True])
    chains = Chains(np.array([0]), np.array([n]), np.array([0]))
    post = forward_backward(chains, sold, np.full(n, 3.0), T_A[None], INIT[:1], 1)
    assert post.on[[0, 6, 7]].tolist() == [1.0, 1.0, 1.0]
    assert post.on[1:6].sum() < 0.2 and post.on[3] < 0.01
    slow = forward_backward(chains, sold, np.full(n, 0.05), T_A[None], INIT[:1], 1)
    assert slow.on[1:6].min() > 0.7  # at 0.05 a day, zero days are what ON predicts: the transitions decide
    assert OUT != ABSENT  # the two off states are told apart only by their transitions


def test_unseen_pairs_gross_up_the_exposure_as_a_zero_truncated_count():
    """Two pairs of exposure 1 that sold 2 and 1 units: the zero-truncated Poisson MLE solves
    lambda / (1 - exp(-lambda)) = 1.5, lambda = 0.87422 (not the plain 3 / 2 = 1.5)."""
    from autovend.calibration.unseen import unseen_corrected

    omega, exposure = unseen_corrected(np.array([3.0, 50.0]), np.array([0, 0, 1]), np.array([1.0, 1.0, 10.0]), 0.0)
    assert omega[0] == pytest.approx(0.874217, rel=1e-5)
    assert exposure[0] == pytest.approx(3.0 / omega[0], rel=1e-9)  # units / exposure = omega at the root
    # a fast seller (one pair, 50 units in exposure 10: exp(-50) unseen pairs) is not moved
    assert omega[1] == pytest.approx(5.0, rel=1e-12)

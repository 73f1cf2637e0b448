"""The array baseline's fast paths give what the plain computations they stand for give, bit for bit."""

from __future__ import annotations

import numpy as np

from autovend.agents.array_baseline.review import FEW_PICKS, top, top_sorted


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
        count = rng.integers(0, FEW_PICKS + 4 if trial % 2 else 4, R)
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
    for _ in range(400):
        R, K = int(rng.integers(1, 6)), int(rng.integers(1, 12))
        score = rng.choice(np.array([0.0, 1.0, 2.0, 0.5, np.inf, -np.inf, np.nan]), (R, K))
        valid = rng.random((R, K)) < 0.7
        count = rng.integers(0, 4, R)
        width = min(int(count.max()), K)
        cols, ok = top(score, valid, count)
        if width:
            want = top_sorted(np.where(valid, -score, np.inf), valid, count, width)
            assert np.array_equal(cols, want[0]) and np.array_equal(ok, want[1])
        assert cols.shape == ok.shape == (R, width)

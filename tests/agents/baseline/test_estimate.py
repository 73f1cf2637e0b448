"""Demand estimates: dispersion by moments, the machine's rate shared by attraction, pooled indexes."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.estimate import dispersion, estimate, pooled_index, share_scale


def test_dispersion_by_moments():
    # [5, 15] x 4: mean 10, sample variance 8 * 25 / 7 = 28.5714; r = 100 / 18.5714 = 5.3846
    assert dispersion([5, 15] * 4, default=3.0) == pytest.approx(100 / (200 / 7 - 10))
    assert dispersion([5, 15] * 3, default=3.0) == 3.0  # fewer than 7 days: the default
    assert dispersion([10] * 8, default=3.0) == 50.0  # no extra variance: practically Poisson


def test_share_scale_splits_the_machine_rate_among_carried_products():
    # machine 0 sells 10 a day and carries products with attraction 1 and 3 (not the third, 4): 2.5 and 7.5.
    # Machine 1 carries nothing: all its products share 6 a day, 3 and 3
    attr = np.array([[1.0, 3.0, 4.0], [1.0, 1.0, 0.0]])
    active = np.array([[True, True, False], [False, False, False]])
    scale = share_scale(attr, active, np.array([10.0, 6.0]))
    assert (attr * scale[:, None]).tolist() == [[2.5, 7.5, 10.0], [3.0, 3.0, 0.0]]


def test_pooled_index_without_history_is_neutral(tiny):
    idx, fmk = pooled_index(np.zeros((2, 4)), np.zeros((2, 4)), 0.5, tiny, BaselineConfig())
    assert idx.tolist() == [1.0] * 4
    assert fmk.tolist() == [[1.0] * 4] * 2


def test_pooled_index_by_hand(tiny):
    # machine 0 sold 20 units of A in 10 exposure-days and nothing of B in 10: its level is 1 a day, A's
    # relative units 20, B's 0. Site a, category 0: factor (20 + 60) / (20 + 60) = 1 (site b: no data, 1).
    # Subcategory 0 (A, B, C): (20 + 30) / (20 + 30) = 1. Index of A: (20 + 7 x 1) / (10 + 7) = 27 / 17;
    # of B: 7 / 17; of C and D (never shown): 1
    cu = np.array([[20.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    ce = np.array([[10.0, 10.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    idx, fmk = pooled_index(cu, ce, 0.5, tiny, BaselineConfig())
    assert idx == pytest.approx([27 / 17, 7 / 17, 1.0, 1.0])
    assert fmk == pytest.approx(np.ones((2, 4)))


def test_estimate_before_any_sale(memory):
    # nothing sold yet: each machine is expected to sell the prior 15 units a day, shared by its 3 products
    est = estimate(memory)
    assert est.machine_rate.tolist() == [15.0, 15.0]
    carried = np.where(memory.s.active, est.mu, 0.0).sum(axis=1)
    assert carried == pytest.approx([15.0, 15.0])
    assert est.mu[0, memory.s.active[0]] == pytest.approx([5.0, 5.0, 5.0])
    # margins at the reference prices: A 1.5, B 2, C 2, D 1.5 CNY
    assert est.margin[0] == pytest.approx([1.5, 2.0, 2.0, 1.5])
    assert est.r.tolist() == [3.0, 3.0]  # the default dispersion
    assert est.cycle is memory.s.cycle  # the visits set the cycle the estimates read

"""Procurement: lot rounding, echelon reorder and order-up-to levels, order quantities, the cash floor."""

from __future__ import annotations

import math

import numpy as np
import pytest

from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.procurement import (
    EchelonLevels,
    echelon_levels,
    order_quantities,
    round_lots,
    within_cash,
)

POISSON = 1e12  # a dispersion r this large leaves var = mean


def test_round_lots():
    # below two lots (12) quantities stay as they are (rounded up to whole units); from 12 on, whole lots
    assert round_lots([0.2, 5.0, 11.5, 12.0, 13.0, -3.0], 6).tolist() == [1, 5, 12, 12, 18, 0]
    assert round_lots([7.2], 1).tolist() == [8]


def test_echelon_levels_by_hand():
    """One machine; product 0 proven, product 1 on trial, product 2 not carried.

    Product 0: mu 2 a day, lead 3 days: demand 6, sd sqrt(6) = 2.4495 (r huge). cu = margin 3; co = rent 0.25
    x (cover 3 + half the 2-day cycle) = 1 (cost 0): ratio 0.75, z = 0.6745. Reorder = shelf target 10 + 6
    + 0.6745 x 2.4495 = 17.6522; up to = 17.6522 + 3 days x 2 = 23.6522 (the spoilage cap 10 + 0.7 x 2 x 1000
    days of life does not bind); priority = 2 a day x margin 3 = 6.
    Product 1 is bought for its shelf target only: reorder = up to = 5.
    """
    cfg = BaselineConfig(max_cycle_days=2)
    levels = echelon_levels(
        shelf_target=np.array([10.0, 5.0, 0.0]),
        mu=np.array([[2.0, 1.0, 4.0]]),
        r=np.array([POISSON]),
        margin=np.array([[3.0, 3.0, 3.0]]),
        active=np.array([[True, True, False]]),
        on_trial=np.array([[False, True, False]]),
        life=np.array([1000, 1000, 1000]),
        cost=np.zeros(3),
        rent=0.25,
        lead_days=3,
        cover_days=3.0,
        cfg=cfg,
    )
    z = 0.674490
    assert levels.reorder[0] == pytest.approx(10 + 6 + z * math.sqrt(6), abs=1e-5)
    assert levels.reorder[0] == pytest.approx(17.6522, abs=1e-4)
    assert levels.up_to[0] == pytest.approx(23.6522, abs=1e-4)
    assert levels.reorder[1] == levels.up_to[1] == 5.0
    assert levels.reorder[2] == levels.up_to[2] == 0.0
    assert levels.priority.tolist() == [6.0, 3.0, 0.0]


def test_echelon_levels_cap_at_what_sells_within_the_shelf_life():
    # mu 2 a day, life 5 days: the up-to level is capped at the shelf target 10 + 0.7 x 10 = 17
    levels = echelon_levels(
        shelf_target=np.array([10.0]),
        mu=np.array([[2.0]]),
        r=np.array([POISSON]),
        margin=np.array([[3.0]]),
        active=np.array([[True]]),
        on_trial=np.array([[False]]),
        life=np.array([5]),
        cost=np.zeros(1),
        rent=0.0,
        lead_days=3,
        cover_days=3.0,
        cfg=BaselineConfig(),
    )
    assert levels.up_to.tolist() == [17.0]


def test_order_quantities_only_below_the_reorder_level():
    levels = EchelonLevels(
        reorder=np.array([17.65, 5.0, 5.0, 3.0]),
        up_to=np.array([23.65, 5.0, 9.0, 8.0]),
        priority=np.zeros(4),
    )
    # 0: 12 < 17.65 -> 23.65 - 12 = 11.65 -> 12 units (two lots of 6); 1: 5 is not below 5; 2: 9 - 4 = 5;
    # 3: not carried
    qty = order_quantities(levels, np.array([12, 5, 4, 0]), np.array([True, True, True, False]), lot=6)
    assert qty.tolist() == [12, 0, 5, 0]


def test_within_cash_keeps_the_highest_priority_lines():
    ks = np.array([0, 3, 5])
    value = np.array([100.0, 50.0, 80.0])
    priority = np.array([1.0, 3.0, 2.0])
    assert within_cash(ks, value, priority, 230.0).tolist() == [0, 3, 5]  # all fit
    # 140: by priority 3 (50), 5 (80): 130 fits; 0 (100) would make 230
    assert within_cash(ks, value, priority, 140.0).tolist() == [3, 5]
    assert within_cash(ks, value, priority, 40.0).tolist() == []
    assert within_cash(ks, value, priority, -10.0).tolist() == []  # cash already below the floor

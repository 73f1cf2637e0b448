"""Visits: the economics of a service cycle, the weekly schedule, extra visits for a low shelf."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.agents.baseline.visits import (
    best_cycle,
    cycle_value,
    is_due,
    next_service,
    next_workday,
    stock_shortfall,
)

POISSON = 1e12  # a dispersion r this large leaves var = mean
WEEKDAY = (np.arange(40) - 1) % 7  # day 1 is a Monday (0), day 3 a Wednesday (2)


def test_cycle_value_expected_sales_net_of_the_fee():
    # mu 4 a day, 1-day cycle, stock 4: mean 4, sd 2, E[min(D, 4)] = 4 - 2 x L(0) = 4 - 2 x 0.398942 = 3.202115;
    # x margin 2 = 6.404230, less the fee 5: 1.404230 a day
    assert cycle_value(np.array([4.0]), np.array([2.0]), POISSON, np.array([4]), 1, 5.0) == pytest.approx(
        1.404230, abs=1e-6
    )
    # a product sold at a loss counts with margin 0: only the fee is left, spread over 2 days
    assert cycle_value(np.array([4.0]), np.array([-1.0]), POISSON, np.array([8]), 2, 5.0) == pytest.approx(-2.5)


def test_best_cycle_weighs_fees_against_empty_shelves():
    # mu 4 a day, margin 1, fee 3. With stock for 3 days (and plenty) every unit sells: value 4 - 3 / H,
    # 1, 2.5, 3 for H = 1, 2, 3; a longer cycle gets no stock here, sells nothing and only pays the fee
    def stock_for(H: int) -> np.ndarray:
        return np.array([1000 if H <= 3 else 0])

    assert best_cycle(np.array([4.0]), np.array([1.0]), POISSON, 3.0, 7, stock_for) == 3
    # with stock for every cycle the longest one pays the fee least often
    assert best_cycle(np.array([4.0]), np.array([1.0]), POISSON, 3.0, 7, lambda H: np.array([1000])) == 7
    # without a fee every cycle earns the same: the shortest wins the tie
    assert best_cycle(np.array([4.0]), np.array([1.0]), POISSON, 0.0, 7, lambda H: np.array([1000])) == 1


def test_is_due_on_a_short_cycle():
    assert not is_due(5, 3, 3, 0, WEEKDAY, 7, 4)  # 2 days after the last visit
    assert is_due(6, 3, 3, 0, WEEKDAY, 7, 4)


def test_is_due_on_the_weekly_slot():
    # slot Wednesday (2), last served Wednesday day 3
    assert not is_due(8, 3, 7, 2, WEEKDAY, 7, 4)  # Monday day 8: no Wednesday since
    assert is_due(10, 3, 7, 2, WEEKDAY, 7, 4)  # Wednesday day 10
    # last served Monday day 8 (an extra visit): Wednesday day 10 and Thursday 11 are within min_gap_days 4;
    # on Friday day 12 the gap is 4 and the Wednesday slot has come round since: due (catching up)
    assert not is_due(10, 8, 7, 2, WEEKDAY, 7, 4)
    assert not is_due(11, 8, 7, 2, WEEKDAY, 7, 4)
    assert is_due(12, 8, 7, 2, WEEKDAY, 7, 4)
    # a week overdue: due whatever the weekday (gap 14 >= 7 + 7)
    assert is_due(17, 3, 7, 6, WEEKDAY, 7, 4)


def test_next_workday_skips_days_off():
    workday = np.array([False, True, True, False, False, True])
    assert next_workday(workday, 2) == 5
    assert next_workday(workday, 5) == 6  # past the calendar: its length


def test_next_service_on_the_tiny_world(memory):
    # machine 1 has slot Tuesday (1); served on Monday day 1, weekly: Tuesday day 2 comes within the 4-day
    # minimum gap, so it is due on Friday day 5, the first day 4 days after
    assert memory.s.slot.tolist() == [0, 1]
    assert next_service(memory, 1, 1, 1, 7) == 5
    # served on Tuesday day 2, its slot: due the next Tuesday, day 9 (days 6-7 are a weekend)
    assert next_service(memory, 1, 2, 2, 7) == 9
    # on a 2-day cycle: Wednesday day 3
    assert next_service(memory, 1, 1, 1, 2) == 3


def test_stock_shortfall():
    # 30 units, 8 a day for 3 days: 6 left against 20% of 100 = 20: 14 short
    assert stock_shortfall(30, 8.0, 3, 100, 0.2) == pytest.approx(14.0)
    assert stock_shortfall(60, 8.0, 3, 100, 0.2) == 0.0

"""Day 1: the working calendar, the price band check, the opening state."""

from __future__ import annotations

import pytest

from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.setup import new_state, price_band, work_calendar
from autovend.env.types import Rules
from autovend.errors import ConfigError
from autovend.world.model import Economics
from autovend.world.toy import toy_world


def test_work_calendar_weekends_holidays_and_makeup_days():
    # day 1 is a Wednesday; day 3 (Friday) a holiday, day 5 (Sunday) a makeup workday
    cal = {
        "today": {"day": 1, "weekday": "Wednesday", "is_workday": True},
        "special_days": [{"day": 3, "is_workday": False}, {"day": 5, "is_workday": True}],
    }
    weekday, workday = work_calendar(cal, horizon=5)
    assert len(weekday) == 5 + 40 + 2  # the horizon and the visit schedule's lookahead
    assert weekday[:8].tolist() == [1, 2, 3, 4, 5, 6, 0, 1]
    assert workday[:8].tolist() == [False, True, True, False, False, True, True, True]


def test_price_band_refuses_bounds_below_it():
    rules = Rules.of(toy_world(2, 3, seed=0, economics=Economics(price_band=(0.5, 2.0))))
    assert price_band(rules, BaselineConfig()) == (0.5, 2.0)
    with pytest.raises(ConfigError, match="multiplier_bounds"):
        price_band(rules, BaselineConfig(multiplier_bounds=(0.4, 1.5), start_multiplier=1.0))


def test_new_state_opens_at_reference_prices_with_no_trial(tiny):
    cfg = BaselineConfig(starter_skus=3, n_skus=3, price_groups="site_type")
    s = new_state(tiny, cfg, 1)
    assert s.price.tolist() == [[300, 500, 400, 250]] * 2
    assert s.active.sum(axis=1).tolist() == [3, 3]
    assert s.active_since[s.active].tolist() == [1] * 6
    assert s.price_group_names == ["a", "b"] and s.price_group.tolist() == [0, 1]
    assert s.mult.tolist() == [100, 100] and s.trial_start.tolist() == [0, 0]
    assert s.slot.tolist() == [0, 1]  # weekly services spread over Monday-Friday

"""The day table: calendar facts, working days, dates and settlement weather by simulation day."""

from __future__ import annotations

import datetime as dt

import pytest

from autovend.sim.days import DayTable


def test_day_one_is_the_new_year_holiday_and_day_two_a_working_thursday(world):
    days = DayTable(world)
    one = days.info(1)
    assert (one.date, one.weekday, one.is_workday, one.day_type, one.holiday_name) == (
        dt.date(2025, 1, 1),
        "Wednesday",
        False,
        "holiday",
        "元旦",
    )
    two = days.info(2)
    assert (two.weekday, two.is_workday, two.day_type, two.holiday_name) == ("Thursday", True, "workday", "")
    assert not days.is_workday(4) and not days.is_workday(5)  # Saturday and Sunday


def test_next_workday_skips_holidays_and_weekends(world):
    days = DayTable(world)
    assert days.next_workday(1) == 2  # New Year -> Thursday
    assert days.next_workday(3) == 6  # Friday -> Monday
    assert days.next_workday(4) == 6


def test_days_outside_the_calendar_are_refused_but_any_day_has_a_date(world):
    days = DayTable(world)
    with pytest.raises(ValueError, match=r"day 0 is outside the world's calendar \(days 1..441\)"):
        days.info(0)
    with pytest.raises(ValueError, match="day 442 is outside"):
        days.is_workday(442)
    assert days.date_str(1) == "2025-01-01" and days.date_str(32) == "2025-02-01"
    assert days.date_str(442) == "2026-03-18"  # past the calendar: counted from the start date


def test_settlement_weather_is_the_worlds_row_of_the_day(world):
    days = DayTable(world)
    row = world.weather.iloc[2]  # 2025-01-03
    assert days.weather(3) == (float(row["t_max_c"]), float(row["precip_mm"]), "workday")

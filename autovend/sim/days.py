"""The world's calendar by simulation day (day 1 = the world's start date): day facts, working days, weather."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd

from autovend.sim.results import DayInfo
from autovend.world.model import World

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class DayTable:
    """Calendar and settlement weather by simulation day (day 1 = world.start_date)."""

    def __init__(self, world: World) -> None:
        self.start = world.start_date
        cal = world.calendar.copy()
        cal_days = (pd.to_datetime(cal["date"]).dt.date - world.start_date).map(lambda x: x.days + 1)
        n = int(cal_days.max()) if len(cal) else 0
        self.n = n
        self._workday = np.zeros(n + 1, dtype=bool)
        self._day_type = [""] * (n + 1)
        self._holiday = [""] * (n + 1)
        for day, w, t, h in zip(cal_days, cal["is_workday"], cal["day_type"], cal["holiday_name"], strict=True):
            if day >= 1:
                self._workday[day] = bool(w)
                self._day_type[day] = str(t)
                self._holiday[day] = "" if pd.isna(h) else str(h)
        self._next_workday = np.zeros(n + 2, dtype=np.int64)
        nxt = 0
        for day in range(n, 0, -1):
            self._next_workday[day] = nxt
            if self._workday[day]:
                nxt = day
        wx = world.weather.copy()
        wx_days = (pd.to_datetime(wx["date"]).dt.date - world.start_date).map(lambda x: x.days + 1)
        self._weather = {
            int(day): (float(t), float(p))
            for day, t, p in zip(wx_days, wx["t_max_c"], wx["precip_mm"], strict=True)
            if day >= 1
        }
        self._dates = [""] + [(self.start + dt.timedelta(days=i)).isoformat() for i in range(n)]

    def _check(self, day: int) -> None:
        if not 1 <= day <= self.n or not self._day_type[day]:
            raise ValueError(f"day {day} is outside the world's calendar (days 1..{self.n})")

    def is_workday(self, day: int) -> bool:
        """True when staff work on `day` (physical actions are possible)."""
        self._check(day)
        return bool(self._workday[day])

    def next_workday(self, day: int) -> int:
        """The first working day after `day` (0 when the calendar has none)."""
        self._check(day)
        return int(self._next_workday[day])

    def info(self, day: int) -> DayInfo:
        """Calendar facts of `day`; ValueError outside the calendar."""
        self._check(day)
        date = self.start + dt.timedelta(days=day - 1)
        return DayInfo(
            day=day,
            date=date,
            weekday=WEEKDAYS[date.weekday()],
            is_workday=bool(self._workday[day]),
            day_type=self._day_type[day],
            holiday_name=self._holiday[day],
        )

    def date_str(self, day: int) -> str:
        """ISO date of a day."""
        if 1 <= day < len(self._dates):
            return self._dates[day]
        return (self.start + dt.timedelta(days=day - 1)).isoformat()

    def weather(self, day: int) -> tuple[float, float, str]:
        """(t_max_c, precip_mm, day_type) of the settlement weather of `day`."""
        t, p = self._weather[day]
        return t, p, self._day_type[day]

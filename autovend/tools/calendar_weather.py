"""The calendar and weather the tools read, indexed by simulation day once per world.

`CalendarIndex`: the published special days (holidays, makeup workdays); `WeatherIndex`: each day's
settlement weather and the forecasts issued on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from autovend.world.model import World

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True, eq=False)
class CalendarIndex:
    """The published special days of the world's calendar: public holidays and makeup workdays.

    A holiday is a day off by law (day_type 'holiday', weekends inside a holiday included); a
    makeup workday is a Saturday or Sunday on which people work to bridge a holiday. Days are
    simulation day numbers (day 1 = the world's start date); they may run past the horizon.
    """

    days: IntArray
    entries: tuple[dict[str, Any], ...]

    @classmethod
    def from_world(cls, world: World) -> CalendarIndex:
        """Collect the special days of `world.calendar`."""
        cal = world.calendar
        dates = pd.to_datetime(cal["date"])
        day_no = ((dates - pd.Timestamp(world.start_date)).dt.days + 1).to_numpy(np.int64)
        weekday = dates.dt.day_of_week.to_numpy()
        workday = cal["is_workday"].to_numpy(dtype=bool)
        holiday = (cal["day_type"].astype(str) == "holiday").to_numpy()
        makeup = workday & (weekday >= 5)
        names = cal["holiday_name"].fillna("").astype(str).to_numpy(dtype=object)
        keep = np.flatnonzero((holiday | makeup) & (day_no >= 1))
        order = keep[np.argsort(day_no[keep], kind="stable")]
        entries = tuple(
            {
                "day": int(day_no[i]),
                "date": dates.iloc[i].date().isoformat(),
                "weekday": WEEKDAY_NAMES[int(weekday[i])],
                "kind": "holiday" if holiday[i] else "makeup_workday",
                "name": names[i] or None,
                "is_workday": bool(workday[i]),
            }
            for i in order
        )
        return cls(days=day_no[order], entries=entries)

    def between(self, first: int, last: int) -> list[dict[str, Any]]:
        """Special days with day number in [first, last]."""
        lo = int(np.searchsorted(self.days, first, side="left"))
        hi = int(np.searchsorted(self.days, last, side="right"))
        return [dict(e) for e in self.entries[lo:hi]]


# ------------------------------------------------------------------------------------------------ weather


@dataclass(frozen=True, eq=False)
class WeatherIndex:
    """What the weather tool shows on each day: today's settlement weather and the forecasts issued today.

    Lead 0 of the world's forecast table is the settlement weather (what demand is settled with);
    leads 1-7 are the forecasts issued that morning. Days without a forecast row fall back to the
    settlement weather.
    """

    start: pd.Timestamp
    forecast: dict[int, list[tuple[int, int, float, float]]]  # issue day -> (target day, lead, t, p)
    settlement: dict[int, tuple[float, float]]  # day -> (t_max_c, precip_mm)

    @classmethod
    def from_world(cls, world: World) -> WeatherIndex:
        """Index the world's forecasts and settlement weather by simulation day."""
        start = pd.Timestamp(world.start_date)
        wx = world.weather
        wx_day = ((pd.to_datetime(wx["date"]) - start).dt.days + 1).to_numpy(np.int64)
        settlement = {
            int(d): (float(t), float(p))
            for d, t, p in zip(wx_day, wx["t_max_c"], wx["precip_mm"], strict=True)
            if pd.notna(t) and pd.notna(p)
        }
        fc = world.forecast
        forecast: dict[int, list[tuple[int, int, float, float]]] = {}
        if len(fc):
            issue = ((pd.to_datetime(fc["issue_date"]) - start).dt.days + 1).to_numpy(np.int64)
            target = ((pd.to_datetime(fc["target_date"]) - start).dt.days + 1).to_numpy(np.int64)
            for i, t_day, lead, t, p in zip(
                issue, target, fc["lead"].to_numpy(np.int64), fc["t_max_c"], fc["precip_mm"], strict=True
            ):
                forecast.setdefault(int(i), []).append((int(t_day), int(lead), float(t), float(p)))
        return cls(start=start, forecast=forecast, settlement=settlement)

    def week(self, day: int) -> list[dict[str, Any]]:
        """Today (lead 0) and the next seven days, as issued on `day`."""
        issued = {lead: (t_day, t, p) for t_day, lead, t, p in self.forecast.get(day, [])}
        out = []
        for lead in range(8):
            target = day + lead
            if lead in issued:
                _, t, p = issued[lead]
                basis = "settlement" if lead == 0 else "forecast"
            elif target in self.settlement:
                t, p = self.settlement[target]
                basis = "settlement"
            else:
                continue
            date = self.start + pd.Timedelta(days=target - 1)
            out.append(
                {
                    "day": target,
                    "date": date.date().isoformat(),
                    "weekday": WEEKDAY_NAMES[date.day_of_week],
                    "lead": lead,
                    "t_max_c": round(t, 1),
                    "precip_mm": round(p, 1),
                    "basis": basis,
                }
            )
        return out

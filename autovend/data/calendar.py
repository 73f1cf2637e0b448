"""Working-day calendars: from a source's calendar.csv or from the maintained `holidays` library."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

import pandas as pd

from autovend.errors import SourceError

if TYPE_CHECKING:
    import holidays

CALENDAR_COLUMNS = ["date", "is_workday", "holiday_name", "day_type"]


def _holiday_table(country: str, years: list[int], language: str | None) -> holidays.HolidayBase:
    import holidays  # only when a calendar is built: loading a world reads its calendar from the bundle

    try:
        return holidays.country_holidays(country, years=years, language=language)
    except NotImplementedError as exc:
        raise SourceError(
            f"country {country!r} has no public-holiday calendar in the `holidays` library; "
            "add a calendar.csv to the source (date, is_workday, holiday_name)"
        ) from exc


def build_calendar(country: str, start: dt.date, end: dt.date, language: str | None = None) -> pd.DataFrame:
    """One row per date in [start, end]: is_workday, holiday_name ('' if none) and day_type.

    A day is a workday when it is Monday-Friday and not a public holiday, or a makeup workday on a
    weekend (the library's `weekend_workdays`). day_type is 'holiday' for public holidays (days off
    by law, including bridging days off), 'weekend' for other days off, 'workday' otherwise.
    """
    if end < start:
        raise ValueError(f"calendar end {end} is before start {start}")
    years = list(range(start.year, end.year + 1))
    table = _holiday_table(country, years, language)
    weekend_workdays = set(getattr(table, "weekend_workdays", set()))
    dates = pd.date_range(start, end, freq="D")
    rows = []
    for ts in dates:
        d = ts.date()
        name = table.get(d)
        is_weekend = d.weekday() >= 5
        if name is not None and d not in weekend_workdays:
            workday, day_type = False, "holiday"
        elif d in weekend_workdays:
            workday, day_type = True, "workday"
        elif is_weekend:
            workday, day_type = False, "weekend"
        else:
            workday, day_type = True, "workday"
        rows.append((d, workday, name if day_type == "holiday" else "", day_type))
    out = pd.DataFrame(rows, columns=CALENDAR_COLUMNS)
    out["date"] = pd.to_datetime(out["date"])
    return out


def calendar_from_table(table: pd.DataFrame) -> pd.DataFrame:
    """Normalise a contract calendar.csv (date, is_workday, holiday_name?) and derive day_type.

    A non-workday with a holiday name is a 'holiday'; a non-workday without one is a 'weekend'.
    """
    out = pd.DataFrame({"date": pd.to_datetime(table["date"])})
    out["is_workday"] = table["is_workday"].astype(bool).to_numpy()
    names = table["holiday_name"] if "holiday_name" in table else pd.Series([""] * len(table))
    out["holiday_name"] = names.fillna("").astype(str).to_numpy()
    out["day_type"] = "workday"
    off = ~out["is_workday"]
    out.loc[off & (out["holiday_name"] != ""), "day_type"] = "holiday"
    out.loc[off & (out["holiday_name"] == ""), "day_type"] = "weekend"
    return out.sort_values("date").reset_index(drop=True)[CALENDAR_COLUMNS]

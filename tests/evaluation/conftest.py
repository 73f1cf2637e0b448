"""A hand-made world and hand-made runs for the evaluation tests.

The world has two machines of capacity 10 and three products, a neutral environment (E = 1 on every
day), every day a working day and a fixed lead time of 3 days, so that expected demand, expected
gross profit and every ledger number can be worked out by hand:

    machine  site    U    b(A)  b(B)  b(C)      product  ref  cost  life
    M1       office  1.0  2.0   1.0   0.5       A        4.0  2.0   30
    M2       campus  2.0  0.5   1.0   2.0       B        5.0  2.0   90
                                                C        2.0  1.5   4

Elasticities: office 2.6, campus 3.5 (the benchmark defaults); eta = 0.5, phi = 5.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd
import pytest

from autovend.demand.settings import (
    CalendarSettings,
    DemandSettings,
    EnvironmentSettings,
    RainSettings,
    TemperatureSettings,
)
from autovend.evaluation.rundata import RunData
from autovend.sim.hidden import HIDDEN_COLUMNS
from autovend.sim.records import RECORD_TABLES
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world

SITES = ("worksite", "campus", "residential", "commercial", "office", "public", "unknown")
HORIZON = 12


def neutral_demand() -> DemandSettings:
    """Default eta, phi and elasticities with an environment multiplier of exactly 1."""
    ones = dict.fromkeys(SITES, 1.0)
    env = EnvironmentSettings(
        temperature=TemperatureSettings(slope_per_c={}),
        rain=RainSettings(light=ones, heavy=ones),
        calendar=CalendarSettings(
            day_type={s: {"workday": 1.0, "weekend": 1.0, "holiday": 1.0} for s in SITES}, holiday_category={}
        ),
    )
    return DemandSettings(environment=env)


def hand_world(horizon: int = HORIZON) -> World:
    """The world of the module docstring."""
    machines = pd.DataFrame(
        {
            "device_id": ["M1", "M2"],
            "location": ["office/office_building", "campus/university"],
            "site_type": ["office", "campus"],
            "capacity": [10, 10],
            "U": [1.0, 2.0],
        }
    )
    catalog = pd.DataFrame(
        {
            "sku_id": ["A", "B", "C"],
            "name": ["water A", "chips B", "candy C"],
            "category_l1": ["drinks", "snacks", "snacks"],
            "category_l2": ["water", "chips", "candy"],
            "ref_price": [4.0, 5.0, 2.0],
            "unit_cost": [2.0, 2.0, 1.5],
            "shelf_life_days": [30, 90, 4],
        }
    )
    b = np.array([[2.0, 1.0, 0.5], [0.5, 1.0, 2.0]])
    start = dt.date(2025, 3, 3)
    dates = pd.date_range(start, periods=horizon + 420, freq="D")
    calendar = pd.DataFrame({"date": dates.date, "is_workday": True, "holiday_name": "", "day_type": "workday"})
    economics = Economics(horizon_days=horizon, lead_time_pmf={3: 1.0})
    return toy_world(
        2,
        3,
        seed=0,
        economics=economics,
        demand=neutral_demand(),
        start_date=start,
        name="hand",
        machines=machines,
        catalog=catalog,
        base_attraction=b,
        calendar=calendar,
    )


@pytest.fixture(scope="session")
def world() -> World:
    return hand_world()


def _frame(table: str, rows: list[tuple[Any, ...]]) -> pd.DataFrame:
    if table in HIDDEN_COLUMNS:
        return pd.DataFrame(rows, columns=list(HIDDEN_COLUMNS[table]))
    return pd.DataFrame(rows, columns=[c for t in RECORD_TABLES if t.name == table for c in t.column_names])


def summary_row(day: int, **values: float) -> tuple[Any, ...]:
    """One daily_summary row: zeros except the given columns (day and date filled in)."""
    cols = [c for t in RECORD_TABLES if t.name == "daily_summary" for c in t.column_names]
    row = dict.fromkeys(cols, 0.0)
    row.update(day=day, date=(dt.date(2025, 3, 2) + dt.timedelta(days=day)).isoformat(), **values)
    return tuple(row[c] for c in cols)


def make_run(
    world: World,
    calls: list[dict[str, Any]] | None = None,
    meta: dict[str, Any] | None = None,
    **tables: list[tuple[Any, ...]],
) -> RunData:
    """A RunData from hand-written rows; `tables` maps a record or hidden table name to its rows."""
    frames = {name: _frame(name, rows) for name, rows in tables.items()}
    return RunData.from_tables(world, frames, {"agent": "hand", "seed": 1, **(meta or {})}, calls)

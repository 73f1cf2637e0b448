"""The baseline's memory: the facts read once on day 1 (`Static`) and the day-to-day book (`State`).

`BaselineAgent.state_dict` saves the fields of `Static` and `State` by name: renaming, adding or
removing a field changes the format of a saved state (raise `STATE_VERSION` then).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from autovend.agents.baseline.config import BaselineConfig

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

STATE_FORMAT = "autovend-baseline-state"
STATE_VERSION = 1


@dataclass
class Static:
    """What the agent reads once on day 1: rules, catalog, machines, calendar."""

    horizon: int
    visit_fee: float
    rent: float  # warehouse rent per unit and day
    lead_days: int  # promised lead time
    band: tuple[float, float]
    sku_ids: list[str]
    ref_fen: IntArray
    cost: FloatArray
    life: IntArray
    l1: IntArray  # category code
    l2: IntArray  # subcategory code
    n_l1: int
    n_l2: int
    device_ids: list[str]
    site: IntArray  # site-type code
    site_names: list[str]
    n_site: int
    capacity: IntArray
    weekday: IntArray  # by day number (index 0 unused), 0 = Monday
    workday: BoolArray  # by day number

    @cached_property
    def sku_index(self) -> dict[str, int]:
        """Product number of each sku_id (its row in the catalog)."""
        return {k: i for i, k in enumerate(self.sku_ids)}

    @cached_property
    def device_index(self) -> dict[str, int]:
        """Machine number of each device_id."""
        return {d: i for i, d in enumerate(self.device_ids)}


@dataclass
class State:
    """What changes from day to day (all of it goes into `state_dict`)."""

    day_done: int  # last day ended
    shelf: IntArray  # (M, K) units on each shelf, as the agent's book keeps them
    price: IntArray  # (M, K) prices in force, fen
    units_hist: npt.NDArray[np.int16]  # (W, M, K) units sold, ring by day % W
    expo_hist: npt.NDArray[np.float32]  # (W, M, K) exposure-days, ring by day % W
    gp_hist: FloatArray  # (W, M) gross profit of each machine-day, ring by day % W
    cum_units: FloatArray  # (M, K) units sold since the start, older days discounted (memory_half_life_days)
    cum_expo: FloatArray  # (M, K) exposure-days, discounted alike
    active: BoolArray  # (M, K) carried (restocked) products
    phase_out: BoolArray  # (M, K) dropped products still selling down
    dropped: BoolArray  # (M, K) judged poor at that machine: not offered there again
    active_since: IntArray  # (M, K)
    inactive_since: IntArray  # (K,) first day a product was carried nowhere (0 while carried)
    last_visit: IntArray  # (M,) 0 = never
    cycle: IntArray  # (M,) service interval chosen at the last visit, days
    first_visit: IntArray  # (M,)
    slot: IntArray  # (M,) weekday of the weekly service
    must_visit_by: IntArray  # (M,) earliest expiry day on the shelf, 0 = none
    opening_day: int
    price_group: IntArray  # (M,) the price group of each machine (one multiplier per group)
    price_group_names: list[str]
    group: IntArray  # (M,) crossover half of each machine within its price group (0 / 1)
    mult: IntArray  # (G,) incumbent price multiplier of each price group, percent
    cand: IntArray  # (G,) candidate multiplier of the running trial, percent
    direction: IntArray  # (G,) +1 / -1
    trial_start: IntArray  # (G,) 0 = no trial running
    fails: IntArray  # (G,) trials lost in a row
    hold_until: IntArray  # (G,)
    arm_hist: npt.NDArray[np.int8]  # (W, M) arm of each machine-day: -1 none, 0 incumbent, 1 candidate
    gp_sum: FloatArray  # (M, 2) gross profit by arm in the running trial
    gp_n: IntArray  # (M, 2) days by arm
    trials: list[tuple[int, str, int, int, float, bool]]  # (day, group, incumbent %, candidate %, effect, kept)


@dataclass
class Memory:
    """What every step of a day reads and updates: the settings, the static facts and the day-to-day state."""

    cfg: BaselineConfig
    st: Static
    s: State


def copy_value(value: Any) -> Any:
    """A copy of a state value that shares no mutable part with it (arrays and lists copied)."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return list(value)
    return value

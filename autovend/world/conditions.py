"""Operating conditions a world carries beyond its tables (`Conditions`).

They are more suppliers, split deliveries, outages, demand shifts, machine breakdowns and the notices an agent is
shown about them.

A scenario (`autovend.world.scenario`) changes a world in two ways: what fits a table (unit costs, fees, the lead
times of the default supplier, weather, the calendar) is written into the table, and what happens on some days only
is written here, with every machine named by its device id and every window by day numbers (day 1 = the world's
start date). The simulator honours each entry (`autovend.sim`); the bundle keeps them in settings.json under
`conditions`, and only when there is one, so a world without conditions has the hash it always had.

- `suppliers`: suppliers besides the default one (`Economics.default_supplier`). One sells at `price_factor` x the
  catalog unit cost (at least 1: stock is valued at the catalog cost, and the premium above it is a cost of the day,
  `supplier_premium`), promises `promised_days` and delivers after a lead time drawn from its own `lead_time_pmf`.
- `splits`: partial deliveries of a supplier. With `probability` an order lands in two parts: a share between
  `min_share` and `max_share` on its arrival day, the rest `min_delay_days`..`max_delay_days` later.
- `outages`: a supplier delivers nothing on days `first_day`..`last_day`; what falls due then lands the day after.
- `demand_shifts`: expected demand at the named machines (and categories, all when empty) is multiplied by
  `factor` on days `first_day`..`last_day` (a competitor opening, a site closing: factor 0).
- `breakdowns`: a machine sells nothing and cannot be restocked on days `first_day`..`last_day` (its stock stays;
  reduce and delist still work).
- `notices`: texts the daily observation shows on days `first_day`..`last_day` (an announced closing, an outage).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

FloatArray = npt.NDArray[np.float64]
SUPPLIER_ID = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
MAX_DAY = 100_000  # a window ends within this many days (a world's horizon and calendar are far shorter)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _Window(_Frozen):
    """Days `first_day`..`last_day` (inclusive; day 1 = the world's start date)."""

    first_day: int = Field(ge=1, le=MAX_DAY)
    last_day: int = Field(ge=1, le=MAX_DAY)

    @model_validator(mode="after")
    def _ordered(self) -> _Window:
        if self.last_day < self.first_day:
            raise ValueError(f"last_day {self.last_day} is before first_day {self.first_day}; swap them")
        return self

    def covers(self, day: int) -> bool:
        """Whether `day` lies in the window."""
        return self.first_day <= day <= self.last_day


def check_pmf(pmf: dict[int, float]) -> dict[int, float]:
    """A lead-time distribution: whole days >= 1 with probabilities >= 0 summing to 1 (else ValueError in words)."""
    if not pmf or any(k < 1 for k in pmf) or any(not 0 <= p <= 1 for p in pmf.values()):
        raise ValueError("lead_time_pmf needs lead times of at least 1 day with probabilities from 0 to 1")
    if abs(sum(pmf.values()) - 1.0) > 1e-9:
        raise ValueError(f"lead_time_pmf must sum to 1, sums to {sum(pmf.values()):.6g}")
    return {int(k): float(pmf[k]) for k in sorted(pmf)}


class Supplier(_Frozen):
    """A supplier besides the default one (module docstring)."""

    supplier_id: str
    price_factor: float = Field(ge=1.0, le=5.0)
    promised_days: int = Field(ge=1, le=60)
    lead_time_pmf: dict[int, float]
    note: str = Field("", max_length=300)

    @field_validator("supplier_id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not SUPPLIER_ID.match(v):
            raise ValueError(
                f"supplier_id {v!r} must be 1-32 lowercase letters, digits, '_' or '-', starting with a letter or digit"
            )
        return v

    @field_validator("lead_time_pmf")
    @classmethod
    def _pmf(cls, v: dict[int, float]) -> dict[int, float]:
        return check_pmf(v)


class Split(_Frozen):
    """Partial deliveries of one supplier (module docstring)."""

    supplier_id: str = "default"
    probability: float = Field(gt=0.0, le=1.0)
    min_share: float = Field(gt=0.0, lt=1.0)
    max_share: float = Field(gt=0.0, lt=1.0)
    min_delay_days: int = Field(ge=1, le=60)
    max_delay_days: int = Field(ge=1, le=60)

    @model_validator(mode="after")
    def _ranges(self) -> Split:
        if self.max_share < self.min_share:
            raise ValueError(f"max_share {self.max_share} is below min_share {self.min_share}")
        if self.max_delay_days < self.min_delay_days:
            raise ValueError(f"max_delay_days {self.max_delay_days} is below min_delay_days {self.min_delay_days}")
        return self


class Outage(_Window):
    """A supplier delivers nothing in the window; what falls due then lands the day after it."""

    supplier_id: str = "default"


class DemandShift(_Window):
    """Expected demand at `device_ids` (categories `categories`, all when empty) times `factor` in the window."""

    label: str = Field(min_length=1, max_length=80)
    device_ids: tuple[str, ...] = Field(min_length=1)
    categories: tuple[str, ...] = ()
    factor: float = Field(ge=0.0, le=10.0)


class Breakdown(_Window):
    """A machine out of order in the window: no sales, no restock (reduce and delist still work)."""

    device_id: str


class Notice(_Window):
    """A text the daily observation shows in the window."""

    text: str = Field(min_length=1, max_length=500)


class Conditions(_Frozen):
    """Everything a world carries beyond its tables (module docstring); empty for a world as exported."""

    suppliers: tuple[Supplier, ...] = ()
    splits: tuple[Split, ...] = ()
    outages: tuple[Outage, ...] = ()
    demand_shifts: tuple[DemandShift, ...] = ()
    breakdowns: tuple[Breakdown, ...] = ()
    notices: tuple[Notice, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the world has no condition at all (settings.json then has no `conditions`)."""
        return not any((self.suppliers, self.splits, self.outages, self.demand_shifts, self.breakdowns, self.notices))

    def payload(self) -> dict[str, Any]:
        """The JSON of settings.json's `conditions` (keys as strings, lists for tuples)."""
        return self.model_dump(mode="json")

    def supplier(self, supplier_id: str) -> Supplier | None:
        """The extra supplier of that id, or None."""
        return next((s for s in self.suppliers if s.supplier_id == supplier_id), None)

    def split_of(self, supplier_id: str) -> Split | None:
        """The partial-delivery rule of a supplier, or None."""
        return next((s for s in self.splits if s.supplier_id == supplier_id), None)

    def delivery_day(self, supplier_id: str, day: int) -> int:
        """The day a delivery of `supplier_id` due on `day` lands: after every outage window that holds it."""
        moved = True
        while moved:
            moved = False
            for o in self.outages:
                if o.supplier_id == supplier_id and o.covers(day):
                    day, moved = o.last_day + 1, True
        return day

    def broken(self, device_id: str, day: int) -> Breakdown | None:
        """The breakdown that keeps `device_id` out of order on `day`, or None."""
        return next((b for b in self.breakdowns if b.device_id == device_id and b.covers(day)), None)

    def notices_on(self, day: int) -> list[str]:
        """The notices shown on `day`, in the order given."""
        return [n.text for n in self.notices if n.covers(day)]


def demand_factors(
    conditions: Conditions, device_ids: tuple[str, ...], category_names: tuple[str, ...], day: int
) -> FloatArray | None:
    """(M, n categories) multipliers of expected demand on `day`; None when nothing applies that day (the common case).

    Machines in `device_ids` order, categories in `category_names` order (`DemandModel.category_names`); machines out
    of order get 0.
    """
    shifts = [s for s in conditions.demand_shifts if s.covers(day)]
    broken = [b for b in conditions.breakdowns if b.covers(day)]
    if not shifts and not broken:
        return None
    index = {d: i for i, d in enumerate(device_ids)}
    cats = {c: j for j, c in enumerate(category_names)}
    out = np.ones((len(device_ids), len(category_names)))
    for s in shifts:
        rows = [index[d] for d in s.device_ids]
        cols = [cats[c] for c in s.categories] if s.categories else list(range(len(cats)))
        out[np.ix_(rows, cols)] *= s.factor
    for b in broken:
        out[index[b.device_id], :] = 0.0
    return out


def conditions_of(payload: Any) -> Conditions:
    """The `Conditions` of settings.json's `conditions` value (absent: none)."""
    return Conditions() if payload is None else Conditions.model_validate(payload)

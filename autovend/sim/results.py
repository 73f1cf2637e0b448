"""What the simulator hands back: action results, the start and the settlement of a day, the balance.

Money fields end in `_fen` and hold exact integer fen; `to_dict()` gives JSON-ready dicts in CNY
(2 decimals). Nothing here carries evaluation-only data (unmet or expected demand, shocks, actual
lead times): those live in `Simulator.hidden`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from autovend.sim.money import from_fen

# Machine codes of rejected items, with what they mean. Messages add the numbers and the fix.
REJECTION_CODES: dict[str, str] = {
    "invalid_item": "the item is not a mapping of field names to values",
    "unknown_device": "device_id names no machine of this world",
    "unknown_sku": "sku_id names no product of the catalog",
    "unknown_supplier": "supplier_id names no supplier of this world (most worlds have only 'default')",
    "invalid_qty": "qty is missing, not an integer, or not positive",
    "qty_too_large": "qty exceeds the per-item limit (MAX_ITEM_QTY)",
    "invalid_price": "price is missing, not a number, or not finite",
    "price_out_of_band": "price is outside 0.5-2.0 x the reference price",
    "not_workday": "physical actions (restock, reduce, delist) need a working day",
    "machine_out_of_order": "the machine is broken down (a scenario's breakdown): it cannot be restocked",
    "insufficient_stock": "the warehouse holds fewer units of the SKU than asked",
    "capacity_exceeded": "the machine's shelf would hold more units than its capacity",
    "insufficient_shelf_stock": "the machine holds fewer units of the SKU than asked",
    "not_on_shelf": "the machine holds no unit of the SKU",
}


@dataclass(frozen=True, slots=True)
class Accepted:
    """An item that was carried out: its position in the batch, the item as given, what was done."""

    index: int
    item: dict[str, Any]
    detail: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"index": self.index, "item": _plain(self.item), **_plain(self.detail)}


@dataclass(frozen=True, slots=True)
class Rejected:
    """An item that changed nothing: its position, the item as given, a machine code and a fix-it sentence."""

    index: int
    item: Any
    code: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"index": self.index, "item": _plain(self.item), "code": self.code, "message": self.message}


@dataclass(frozen=True)
class BatchResult:
    """Outcome of one mutating call: items are checked one by one, in order, against the state so far."""

    action: str
    day: int
    accepted: tuple[Accepted, ...]
    rejected: tuple[Rejected, ...]

    @property
    def n_accepted(self) -> int:
        """Number of accepted items."""
        return len(self.accepted)

    @property
    def n_rejected(self) -> int:
        """Number of rejected items."""
        return len(self.rejected)

    @property
    def all_accepted(self) -> bool:
        """True when no item was rejected."""
        return not self.rejected

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: action, day, accepted and rejected items."""
        return {
            "action": self.action,
            "day": self.day,
            "accepted": [a.to_dict() for a in self.accepted],
            "rejected": [r.to_dict() for r in self.rejected],
        }


@dataclass(frozen=True)
class DayInfo:
    """The calendar facts of one simulation day."""

    day: int
    date: dt.date
    weekday: str  # English name, e.g. "Wednesday"
    is_workday: bool
    day_type: str  # workday, weekend or holiday
    holiday_name: str  # '' when none

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "day": self.day,
            "date": self.date.isoformat(),
            "weekday": self.weekday,
            "is_workday": self.is_workday,
            "day_type": self.day_type,
            "holiday_name": self.holiday_name,
        }


@dataclass(frozen=True)
class Balance:
    """Cash and the cost value of unexpired units on shelves, in the warehouse and in transit (fen)."""

    cash_fen: int
    shelf_fen: int
    warehouse_fen: int
    in_transit_fen: int

    @property
    def inventory_fen(self) -> int:
        """Cost of the unexpired units on shelves, in the warehouse and in transit."""
        return self.shelf_fen + self.warehouse_fen + self.in_transit_fen

    @property
    def net_assets_fen(self) -> int:
        """Eq. (1): cash plus the cost of every unexpired unit held."""
        return self.cash_fen + self.inventory_fen

    @property
    def cash(self) -> float:
        """Cash in CNY."""
        return from_fen(self.cash_fen)

    @property
    def net_assets(self) -> float:
        """Net assets in CNY."""
        return from_fen(self.net_assets_fen)

    def to_dict(self) -> dict[str, float]:
        """The observation's balance block, in CNY."""
        return {
            "cash": from_fen(self.cash_fen),
            "shelf": from_fen(self.shelf_fen),
            "warehouse": from_fen(self.warehouse_fen),
            "in_transit": from_fen(self.in_transit_fen),
            "inventory_at_cost": from_fen(self.inventory_fen),
            "net_assets": from_fen(self.net_assets_fen),
        }


@dataclass(frozen=True)
class Arrival:
    """Units of one order that landed in the warehouse at the start of a day."""

    order_id: int
    sku_id: str
    qty: int
    expiry_day: int  # first day on which these units are expired

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "order_id": self.order_id,
            "sku_id": self.sku_id,
            "qty": self.qty,
            "expiry_day": self.expiry_day,
        }


@dataclass(frozen=True)
class DayStart:
    """The start-of-day steps of a day: arrivals, expiry, warehouse rent and the fixed fee."""

    info: DayInfo
    arrivals: tuple[Arrival, ...]
    expired_units: int  # units (shelves and warehouse) that turned expired this morning
    expiry_writeoff_fen: int  # their cost, written off
    warehouse_rent_fen: int
    daily_fee_fen: int
    warehouse_units: int  # units the rent was charged on (after arrivals, expired included)
    delayed_order_ids: tuple[int, ...]  # orders past their promised day and not yet arrived

    @property
    def day(self) -> int:
        """The simulation day."""
        return self.info.day

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, money in CNY."""
        return {
            **self.info.to_dict(),
            "arrivals": [a.to_dict() for a in self.arrivals],
            "expired_units": self.expired_units,
            "expiry_writeoff": from_fen(self.expiry_writeoff_fen),
            "warehouse_rent": from_fen(self.warehouse_rent_fen),
            "daily_fee": from_fen(self.daily_fee_fen),
            "warehouse_units": self.warehouse_units,
            "delayed_order_ids": list(self.delayed_order_ids),
        }


COST_KINDS: tuple[str, ...] = ("purchase", "warehouse_rent", "daily_fee", "visit", "expired_fine")
OPERATING_COST_KINDS: tuple[str, ...] = ("warehouse_rent", "daily_fee", "visit", "expired_fine")


@dataclass(frozen=True)
class DayReport:
    """The settlement of one day, from its start-of-day steps to the close (after sales and visits).

    `costs_fen` holds the day's cash costs by kind (COST_KINDS; purchase is a transfer of cash into
    stock, not a loss). `balance` is taken at the close of the day, before the next day's rent. The
    daily identity: balance.net_assets_fen == previous close + `net_fen` (day 1: start cash + net).
    `machines` has one row per device: units_before / expired_before (shelf units when demand was
    realised), n_skus (products with a unit then), free_capacity, empty (no unit at all), sold_out
    (products whose last unit sold that day), units_sold, expired_units_sold, revenue, gross_profit
    (CNY).
    `start` is this day's own start (arrivals, expiry, rent, fee); `next_day` is the start of the
    following day, or None when the episode is over.
    """

    info: DayInfo
    start: DayStart
    units_sold: int
    expired_units_sold: int
    revenue_fen: int
    cogs_fen: int  # cost of the unexpired units sold (expired ones were written off already)
    costs_fen: dict[str, int]
    expiry_writeoff_fen: int
    discard_writeoff_fen: int
    visited: tuple[str, ...]
    balance: Balance
    machine_table: dict[str, Any] = field(repr=False)  # column -> (M,) array; see `machines`
    next_day: DayStart | None
    done: bool

    @property
    def machines(self) -> pd.DataFrame:
        """One row per device (see the class docstring)."""
        return pd.DataFrame(self.machine_table)

    @property
    def day(self) -> int:
        """The simulation day."""
        return self.info.day

    @property
    def gross_profit_fen(self) -> int:
        """Revenue minus the cost of the unexpired units sold."""
        return self.revenue_fen - self.cogs_fen

    @property
    def operating_costs_fen(self) -> int:
        """Rent, fixed fee, visits and expired-sale fines of the day, and any supplier premium.

        Every cost kind but purchase, which is a transfer of cash into stock.
        """
        return sum(v for k, v in self.costs_fen.items() if k != "purchase")

    @property
    def net_fen(self) -> int:
        """Change of net assets over the day: gross profit - operating costs - write-offs."""
        return self.gross_profit_fen - self.operating_costs_fen - self.expiry_writeoff_fen - self.discard_writeoff_fen

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, money in CNY (machines as a list of row dicts)."""
        return {
            **self.info.to_dict(),
            "units_sold": self.units_sold,
            "expired_units_sold": self.expired_units_sold,
            "revenue": from_fen(self.revenue_fen),
            "cogs": from_fen(self.cogs_fen),
            "gross_profit": from_fen(self.gross_profit_fen),
            "costs": {k: from_fen(v) for k, v in self.costs_fen.items()},
            "expiry_writeoff": from_fen(self.expiry_writeoff_fen),
            "discard_writeoff": from_fen(self.discard_writeoff_fen),
            "net": from_fen(self.net_fen),
            "visited": list(self.visited),
            "balance": self.balance.to_dict(),
            "start": self.start.to_dict(),
            "machines": _plain(self.machines.to_dict(orient="records")),
            "next_day": None if self.next_day is None else self.next_day.to_dict(),
            "done": self.done,
        }


_LEAF_TYPES = frozenset({str, int, float, bool, type(None)})  # returned as they are


def _plain(x: Any) -> Any:
    """Turn numpy scalars, dates and containers into JSON-ready Python values."""
    leaf = _LEAF_TYPES
    if type(x) in leaf:
        return x
    if type(x) is dict:  # the common case, without a call per plain key or value
        return {(k if type(k) is str else str(k)): (v if type(v) in leaf else _plain(v)) for k, v in x.items()}
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    if isinstance(x, (dt.date, dt.datetime)):
        return x.isoformat()
    if hasattr(x, "item"):  # numpy scalar
        return x.item()
    return repr(x)

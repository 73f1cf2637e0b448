"""What an agent gets back from the environment: `Observation` (the daily report), `DayStep` and `Rules`.

These hold only what the agent is shown: the daily report's JSON (as the daily prompt prints it),
the calendar facts of the day, and the operating rules the system prompt states. None of them
holds the simulator, the world or anything of its demand model.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import Any, NamedTuple

from autovend.world.model import World


@dataclass(frozen=True)
class Observation:
    """The daily report of one day, as the agent sees it at the start of the day.

    report: the observation JSON of the daily prompt (blocks balance, pnl, devices, warehouse,
    in_transit, calendar; see `autovend.tools.observation`). prompt: the daily prompt text (the date
    line, the report, the closing reminder). Once the episode is over (`done`), `day` stays at the
    last day, `report` shows the state at its close and `prompt` is the closing message.
    """

    day: int
    horizon_days: int
    date: dt.date
    weekday: str
    is_workday: bool
    done: bool
    report: dict[str, Any]
    prompt: str

    @property
    def net_assets(self) -> float:
        """Net assets (CNY) as the report's balance shows them."""
        return float(self.report["balance"]["net_assets"])

    @property
    def cash(self) -> float:
        """Cash (CNY) as the report's balance shows it."""
        return float(self.report["balance"]["cash"])

    def to_json(self) -> str:
        """The observation as one JSON object (ASCII only; the date as ISO text)."""
        data = {
            "day": self.day,
            "horizon_days": self.horizon_days,
            "date": self.date.isoformat(),
            "weekday": self.weekday,
            "is_workday": self.is_workday,
            "done": self.done,
            "report": self.report,
        }
        return json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)


class DayStep(NamedTuple):
    """What `VendingEnv.end_day` returns, in gymnasium's order.

    observation: the next day's report (or the closing state). reward: the change in net assets
    from the close of the previous day (the start cash before day 1) to the close of the day just
    settled, i.e. the day's net result; rewards add up to final net assets minus start cash.
    terminated: the last day of the world's horizon is settled. truncated: the env's `days` limit
    is reached before the horizon. info: {"settled": the end_day tool's settlement summary} or,
    for a refused end_day, {"error": the message}.
    """

    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]


@dataclass(frozen=True)
class Rules:
    """The operating rules of a world as the system prompt and the tool descriptions state them.

    Everything here is published to every agent (the system prompt prints these numbers, some
    rounded for reading); nothing of the demand model is.
    """

    n_machines: int
    n_products: int
    horizon_days: int
    start_cash: float
    currency: str
    lead_time_days: int  # the promised lead time of an order; actual deliveries may come a little earlier or later
    price_band: tuple[float, float]  # allowed prices as multiples of a product's reference price (inclusive)
    warehouse_rent_per_unit_day: float
    daily_fee: float  # the fixed fee of the whole network per day
    visit_fee: float  # per machine per working day touched by restock, reduce or delist
    expired_sale_fine: float  # per expired unit sold
    memory_limit_chars: int
    supplier: str
    country: str
    timezone: str

    @classmethod
    def of(cls, world: World) -> Rules:
        """The published rules of `world`."""
        eco = world.economics
        return cls(
            n_machines=world.n_machines,
            n_products=world.n_products,
            horizon_days=eco.horizon_days,
            start_cash=float(eco.start_cash),
            currency=eco.currency,
            lead_time_days=int(eco.lead_time_nominal_days),
            price_band=(float(eco.price_band[0]), float(eco.price_band[1])),
            warehouse_rent_per_unit_day=float(eco.warehouse_rent_per_unit_day),
            daily_fee=float(eco.machine_rent_per_day * world.n_machines),
            visit_fee=float(eco.visit_fee),
            expired_sale_fine=float(eco.expired_sale_fine),
            memory_limit_chars=int(eco.memory_limit_chars),
            supplier=eco.default_supplier,
            country=world.country,
            timezone=world.timezone,
        )

"""The agent's system prompt and daily prompt, filled in from the world's settings.

The facts follow the paper's Appendix A (objective, starting state, goods flow, prices, costs,
shelf life, funding, environment, demand, memory, operating loop); the wording is our own. Numbers
come from the world (`World.economics`, catalog size, network size), so a world with other
settings gets a truthful prompt.
"""

from __future__ import annotations

from typing import Any

from autovend.currency import minor_unit
from autovend.sim.results import DayInfo
from autovend.tools.observation import render_json
from autovend.tools.suppliers import supplier_line, supplier_others
from autovend.world.model import World


def _amount(x: float) -> str:
    """40000 -> '40,000'; 0.03 -> '0.03'; 35.0 -> '35'."""
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.2f}".rstrip("0").rstrip(".")


def _factor(x: float) -> str:
    return f"{x:.2f}"


def prompt_facts(world: World) -> dict[str, Any]:
    """The numbers the prompts and tool descriptions quote, from the world's settings."""
    eco = world.economics
    city = world.timezone.rsplit("/", 1)[-1].replace("_", " ")
    return {
        "n_machines": world.n_machines,
        "horizon": eco.horizon_days,
        "start_cash": _amount(eco.start_cash),
        "currency": eco.currency,
        "minor_unit": minor_unit(eco.currency),
        "n_skus": f"{world.n_products:,}",
        "lead_days": eco.lead_time_nominal_days,
        "band_lo": _factor(eco.price_band[0]),
        "band_hi": _factor(eco.price_band[1]),
        "rent": _amount(eco.warehouse_rent_per_unit_day),
        "daily_fee": _amount(eco.machine_rent_per_day * world.n_machines),
        "visit_fee": _amount(eco.visit_fee),
        "fine": _amount(eco.expired_sale_fine),
        "memory_chars": f"{eco.memory_limit_chars:,}",
        "city": city,
        "country": world.country,
        "timezone": world.timezone,
        "supplier": eco.default_supplier,
        "supplier_others": supplier_others(world),
        "supplier_line": supplier_line(world),
    }


SYSTEM_TEMPLATE = """\
You are in charge of {n_machines} smart vending machines over a {horizon}-day run, with {start_cash} {currency} of starting cash.

A day is one turn: you get the day's report, use the tools as often as you like, and close the day with end_day.

## Goal
End the run with the highest possible net assets.

Net assets are cash plus the purchase cost of each unit you own that has not expired, wherever it is: on a machine, in the warehouse, or on its way to you.
- The only way to raise them is to sell units for more than they cost you.
- They fall with warehouse rent, site-visit labor, the fixed daily fee, fines for selling expired units, and stock that goes out of date or gets thrown away unsold.
- Paying for stock swaps cash for inventory of the same value; on its own that is neither a gain nor a loss.

## Where you start
On day 1 the machines and the warehouse hold nothing, no order is on its way, and there is no sales history yet.
All you have is a catalog of {n_skus} SKUs.
Sales only begin after three steps: an order, its delivery, and a restock done on site.

## How goods move
order placed -> shipment on its way -> warehouse -> on-site restock -> machine -> customer purchase
- Cash is paid the moment an order is placed.
- Delivery is promised in {lead_days} days, but a shipment can come a little sooner or later. Goods still on their way can neither be put into a machine nor sold. The daily report lists expected deliveries by day and any order that is overdue.{supplier_line}
- Deliveries go into the warehouse, and restocking can only take units from the warehouse.
- Reducing or delisting takes units off a machine and puts them back in the warehouse; nothing is lost.
- A unit only leaves your hands when a customer buys it or you discard it.

## Prices
Each machine has its own price for each SKU; setting one machine's price does not touch the others.
Any price from {band_lo} to {band_hi} times the SKU's reference (suggested) price is allowed; prices outside that range are refused.

## Costs
Warehouse storage costs {rent} a day for each unit of volume. Any single unit of any SKU occupies one unit of volume: in effect you pay rent per unit stored, and a machine's capacity is just a count of units.
Independently of what you do, a fixed fee of {daily_fee} is deducted each day.
Restock, reduce and delist are done by staff on site. Each machine they touch costs {visit_fee} for that day, however many operations it gets. Staff only go out on working days: on weekends and public holidays on-site operations are refused (makeup workdays count as working days).
Ordering, changing prices, discarding and every query are remote and free. Each tool's description tells you whether it is remote, on-site or memory.

## Shelf life
The catalog gives each SKU a shelf_life_days value, counted from the day a unit reaches the warehouse; moving units between warehouse and machines does not restart it.
An expired unit stays where it is, yet adds zero to net assets.
- Customers can still buy expired units from a machine, and each such sale costs an additional {fine} fine. Delisting them moves them to the warehouse, which ends the fine risk but does not make them fresh again.
- In the warehouse, expired units keep occupying volume and paying rent. Restocking them only puts expired goods in a machine; discarding is the sole way to get rid of them.

## Money
Cash may go below zero. Rent, fees, visit charges and purchases keep being deducted, no interest accrues, and the run continues.
A negative balance lowers net assets by exactly its amount, so a purchase made on credit leaves net assets unchanged on its own: it only turns cash into stock valued at cost.
What such stock really costs is the rent it accrues while it waits, and the {lead_days}-day delay until it can sell.

## Environment
The machines are in {city}, {country} (time zone {timezone}). Money is counted in {currency}, to the {minor_unit}.
Demand reacts to heat, rain and public holidays, and not the same way for every product category or site.

## Demand
- Fill: a fuller machine sells faster. Empty space lowers demand for everything in that machine, not only for the missing products.
- Depth: a product's sales stop growing once a few units of it are on the shelf; more units than that only add rent.
- Noise: daily sales scatter randomly around a product's underlying rate, and a longer window of history estimates that rate better.
- Sites differ: demand level, response to price and which products fit all depend on the kind of location. A product that sells well at one site may not move at another, and a price change that helps one machine can hurt another.

## Memory
Your notebook is never cut or summarised; it holds at most {memory_chars} characters and write_memory replaces it whole.
The conversation carries on from day to day, but older turns may be compacted; the notebook is always kept in full.

## Working alone
No person is watching: nobody will prompt you, sign off a plan or point out a problem.
When you have finished for the day, call end_day.
"""  # noqa: E501

DAILY_TEMPLATE = """\
Day {day} of {horizon} — {weekday}, {date}.

{observation}

Keep the business running and your net assets growing.
Call end_day when you have finished today's work."""


SHELF_LIFE_SECTION = SYSTEM_TEMPLATE[SYSTEM_TEMPLATE.index("## Shelf life\n") : SYSTEM_TEMPLATE.index("## Money\n")]
MADE_TO_ORDER_SECTION = """\
## Made to order
The machines make each drink or dish when a customer buys it. A unit of a SKU is the ingredients of one serving: you order, store and restock ingredients by the serving, and a machine's capacity is how many servings of ingredients it holds. A machine sells a SKU while it holds servings of it.
Ingredients keep for the whole run: nothing expires and there is no fine for expired sales (shelf_life_days in the catalog only says so).

"""  # noqa: E501


def system_prompt(world: World) -> str:
    """The fixed system prompt for a run on `world` (a made-to-order world's says so instead of shelf life)."""
    template = SYSTEM_TEMPLATE
    if world.made_to_order:
        template = template.replace(SHELF_LIFE_SECTION, MADE_TO_ORDER_SECTION)
        template = template.replace(
            ", fines for selling expired units, and stock that goes out of date or", ", and stock that"
        )
    return template.format(**prompt_facts(world))


def day_header(info: DayInfo, horizon: int) -> str:
    """The date line of a daily prompt, e.g. 'Day 1 of 180 — Wednesday, 2025-01-01.'."""
    return f"Day {info.day} of {horizon} — {info.weekday}, {info.date.isoformat()}."


def daily_prompt(info: DayInfo, horizon: int, observation: dict[str, Any]) -> str:
    """The user prompt of one day: the header line, the observation JSON and a closing reminder."""
    return DAILY_TEMPLATE.format(
        day=info.day,
        horizon=horizon,
        weekday=info.weekday,
        date=info.date.isoformat(),
        observation=render_json(observation),
    )

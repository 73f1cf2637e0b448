"""The play page's rules panel: what the system prompt tells every agent, for a person who has not read it.

Every number comes from the world, as the agents' prompt takes it: `prompt_facts(world)` (start cash, fees,
rent, lead time, price band, fine, notebook size: the very strings the prompt prints), the machines' capacity
column and the catalog's shelf lives. The system prompt itself is shown word for word, folded, below; the
day's prompt (`prompt_html`) is part of the state panel, since it changes every day.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from autovend.console.html import esc
from autovend.marks import counted
from autovend.tools.prompts import prompt_facts, system_prompt
from autovend.world.model import World

CATEGORIES_NAMED = 5  # categories named per shelf life


def capacities(world: World) -> str:
    """The machines' capacity: "200 units each", or the range when they differ."""
    caps = sorted(int(c) for c in world.machines["capacity"])
    if caps[0] == caps[-1]:
        return f"{caps[0]:,} units each ({counted(len(caps), 'machine')})"
    return f"{caps[0]:,} to {caps[-1]:,} units (each machine's in the devices table of the report)"


def shelf_lives(world: World) -> list[str]:
    """One line per shelf life in the catalog: its days, how many products, the commonest subcategories."""
    cat = world.catalog
    out = []
    group = "category_l2" if "category_l2" in cat else None
    for days, rows in cat.groupby("shelf_life_days", sort=True):
        line = f"{int(days):,} days: {len(rows):,} product{'s' if len(rows) != 1 else ''}"
        if group is not None:
            names = rows[group].astype(str).value_counts()
            shown = ", ".join(names.index[:CATEGORIES_NAMED])
            line += f" ({shown}{', …' if len(names) > CATEGORIES_NAMED else ''})"
        out.append(line)
    return out


def rules_rows(world: World) -> list[tuple[str, str, str]]:
    """(rule, what it is in this world, the tools concerned): the facts of the system prompt."""
    f: dict[str, Any] = prompt_facts(world)
    cur = f["currency"]
    return [
        (
            "Goal",
            f"the highest net assets after {f['horizon']} days: cash plus the purchase cost of every unit you own "
            "that has not expired, on a machine, in the warehouse or on its way",
            "",
        ),
        (
            "Start",
            f"{f['start_cash']} {cur} cash, {f['n_machines']} empty machines, an empty warehouse, "
            f"a catalog of {f['n_skus']} products",
            "get_catalog, get_categories",
        ),
        (
            "Ordering",
            f"paid when ordered; delivered to the warehouse {f['lead_days']} days later as promised, sometimes a "
            "little sooner or later; goods on their way cannot be sold",
            "place_order",
        ),
        (
            "Restocking",
            "done by staff on site, only on working days (not on weekends or public holidays): moves units "
            "from the warehouse to a machine; reduce and delist move them back",
            "restock, reduce, delist",
        ),
        (
            "Visit fee",
            f"{f['visit_fee']} {cur} per machine touched on a day, however many operations it gets",
            "restock, reduce, delist",
        ),
        ("Machine capacity", capacities(world), ""),
        (
            "Prices",
            f"each machine its own, from {f['band_lo']} to {f['band_hi']} times the product's reference price "
            "(the reference price until you change it)",
            "adjust_price",
        ),
        ("Warehouse rent", f"{f['rent']} {cur} per unit per day", ""),
        ("Fixed daily fee", f"{f['daily_fee']} {cur} a day, whatever you do", ""),
        *(
            [
                (
                    "Made to order",
                    "a unit is the ingredients of one serving and a machine's capacity the servings it holds; "
                    "ingredients do not expire and no fine applies",
                    "place_order, restock",
                )
            ]
            if world.made_to_order
            else [
                (
                    "Shelf life",
                    "counted from the day a unit reaches the warehouse; expired units count zero in net assets",
                    "get_warehouse, discard",
                ),
                ("Expired unit sold", f"a fine of {f['fine']} {cur} per unit", "delist, discard"),
            ]
        ),
        ("Cash", "may go below zero: no interest, the run goes on", ""),
        ("Notebook", f"{f['memory_chars']} characters, replaced whole by write_memory", "read_memory, write_memory"),
        ("Where", f"{f['city']}, {f['country']} (time zone {f['timezone']}); money in {cur}", "get_weather"),
    ]


def _rows_html(rows: Sequence[tuple[str, str, str]], world: World) -> str:
    out = []
    for rule, text, tools in rows:
        extra = ""
        if rule == "Shelf life":
            extra = "<ul>" + "".join(f"<li>{esc(line)}</li>" for line in shelf_lives(world)) + "</ul>"
        key = rule.lower().replace(" ", "-")
        out.append(
            f'<tr data-rule="{esc(key)}"><th>{esc(rule)}</th><td>{esc(text)}{extra}</td>'
            f'<td class="tools-used">{esc(tools)}</td></tr>'
        )
    return "".join(out)


def horizon_warning(world: World, days: int) -> str | None:
    """A warning when `days` ends before an order placed on day 1 is promised (None when it does not).

    An order is promised `lead_time_nominal_days` after it is placed, and units reach a shelf (and can sell) from
    their delivery day on: with fewer days than 1 + the lead time, nothing ordered can be sold.
    """
    lead = world.economics.lead_time_nominal_days
    if days >= 1 + lead:
        return None
    return (
        f"This episode lasts {days} day{'s' if days != 1 else ''}, shorter than a delivery: an order placed on day 1 "
        f"is promised for day {1 + lead} ({lead} days of lead time), after the last day, so nothing ordered can be "
        f"sold. Give --days {1 + lead} or more to see sales."
    )


def how_to_play(world: World) -> str:
    """The steps of a day, for a first-time player (numbers from the world)."""
    f = prompt_facts(world)
    steps = [
        "Read the daily report below: cash, yesterday's sales, each machine's shelf, the warehouse, deliveries.",
        "Find products with <b>get_catalog</b> (a search, a category, a page) and buy them with <b>place_order</b>; "
        f"they reach the warehouse in about {esc(f['lead_days'])} days.",
        "Put warehouse units on machines with <b>restock</b> (working days only, "
        f"{esc(f['visit_fee'])} {esc(f['currency'])} per machine visited); optionally set prices with "
        "<b>adjust_price</b>.",
        "Close the day with <b>end_day</b>: customers buy, costs are charged, the next day's report appears.",
    ]
    return '<ol class="how">' + "".join(f"<li>{s}</li>" for s in steps) + "</ol>"


def rules_html(world: World, opened: bool = True) -> str:
    """The rules panel: how a day goes, the rules table, the system prompt word for word (folded)."""
    table = (
        '<table class="rules-table"><thead><tr><th>rule</th><th>in this world</th><th>tools</th></tr></thead>'
        f"<tbody>{_rows_html(rules_rows(world), world)}</tbody></table>"
    )
    prompt = (
        '<details class="prompt" id="system-prompt"><summary>The system prompt, word for word</summary>'
        f"<pre>{esc(system_prompt(world))}</pre></details>"
    )
    return (
        f'<details class="rules" id="rules"{" open" if opened else ""}><summary>How to play, and the rules of '
        f"this world</summary>{how_to_play(world)}{table}{prompt}</details>"
    )


def prompt_html(prompt: str) -> str:
    """Today's prompt as the agents get it (its first line shown, the whole text folded)."""
    if not prompt:
        return ""
    first = prompt.splitlines()[0]
    return (
        f'<details class="prompt" id="day-prompt"><summary>Today\'s prompt, as an agent gets it: '
        f"<i>{esc(first)}</i></summary><pre>{esc(prompt)}</pre></details>"
    )

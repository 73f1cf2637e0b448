"""The play page's rules panel says what the world's system prompt says, with the world's own numbers."""

from __future__ import annotations

import re
from html import escape

import numpy as np

from autovend.console.rules import capacities, prompt_html, rules_html, shelf_lives
from autovend.tools.prompts import system_prompt
from autovend.world.model import Economics
from autovend.world.toy import toy_machines, toy_world

OTHER = Economics(
    horizon_days=30,
    start_cash=25_000.0,
    visit_fee=47.5,
    lead_time_nominal_days=5,
    warehouse_rent_per_unit_day=0.05,
    machine_rent_per_day=6.0,
    expired_sale_fine=750.0,
    price_band=(0.8, 1.5),
    memory_limit_chars=3_000,
)


def rule(html: str, name: str) -> str:
    """The text of a rule's row (tags dropped)."""
    row = re.search(rf'<tr data-rule="{name}">(.*?)</tr>', html, re.S).group(1)
    return re.sub(r"<[^>]+>", " ", row)


def test_the_numbers_are_the_worlds():
    world = toy_world(4, 20, seed=0, economics=OTHER)
    html = rules_html(world)
    assert "47.5 CNY per machine touched on a day" in rule(html, "visit-fee")
    assert "warehouse 5 days later" in rule(html, "ordering")
    assert "0.05 CNY per unit per day" in rule(html, "warehouse-rent")
    assert "24 CNY a day" in rule(html, "fixed-daily-fee")  # 4 machines at 6
    assert "a fine of 750 CNY per unit" in rule(html, "expired-unit-sold")
    assert "from 0.80 to 1.50 times" in rule(html, "prices")
    assert "25,000 CNY cash, 4 empty machines" in rule(html, "start") and "after 30 days" in rule(html, "goal")
    assert "3,000 characters" in rule(html, "notebook")
    # the system prompt, word for word, quotes the same numbers
    prompt = system_prompt(world)
    assert escape(prompt) in html
    assert "Each machine they touch costs 47.5 for that day" in prompt


def test_the_default_world_says_other_numbers():
    html = rules_html(toy_world(3, 12, seed=0))
    assert "35 CNY per machine touched" in rule(html, "visit-fee") and "3 days later" in rule(html, "ordering")


def test_capacities_and_shelf_lives_come_from_the_tables():
    world = toy_world(3, 12, seed=0)
    assert capacities(world) == f"{int(world.machines['capacity'].iloc[0])} units each (3 machines)"
    machines = toy_machines(3, np.random.default_rng(0)).assign(capacity=[150, 200, 320])
    mixed = toy_world(3, 12, seed=0, machines=machines)
    assert capacities(mixed) == "150 to 320 units (each machine's in the devices table of the report)"
    lines = shelf_lives(world)
    counts = world.catalog["shelf_life_days"].value_counts()
    assert [int(line.split(" days")[0]) for line in lines] == sorted(counts.index)
    assert sum(int(line.split(": ")[1].split(" product")[0]) for line in lines) == world.n_products
    assert all(line in rules_html(world) for line in lines)


def test_the_days_prompt_is_folded_with_its_first_line_shown():
    html = prompt_html('Day 3 of 30 — Friday, 2025-01-03.\n\n{"balance": {}}\n\nCall end_day when done.')
    assert "<summary>Today's prompt, as an agent gets it: <i>Day 3 of 30 — Friday, 2025-01-03.</i>" in html
    assert "&quot;balance&quot;" in html and prompt_html("") == ""

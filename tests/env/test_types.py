"""Rules (the published numbers) and Observation's JSON form."""

from __future__ import annotations

import json

from autovend.env import VendingEnv
from autovend.env.types import Rules
from autovend.tools.prompts import system_prompt
from autovend.world.model import Economics
from autovend.world.toy import toy_world


def test_rules_are_the_numbers_the_system_prompt_states():
    eco = Economics(horizon_days=30, visit_fee=20.0, warehouse_rent_per_unit_day=0.05, price_band=(0.8, 1.5))
    world = toy_world(4, 10, seed=0, economics=eco)
    rules = Rules.of(world)
    assert (rules.n_machines, rules.n_products, rules.horizon_days) == (4, 10, 30)
    assert (rules.visit_fee, rules.warehouse_rent_per_unit_day, rules.price_band) == (20.0, 0.05, (0.8, 1.5))
    assert rules.daily_fee == 4 * 4.0 and rules.lead_time_days == 3 and rules.memory_limit_chars == 6_000
    prompt = system_prompt(world)
    assert "Each machine they touch costs 20 for that day" in prompt
    assert "costs 0.05 a day for each unit of volume" in prompt
    assert "from 0.80 to 1.50 times the SKU's reference" in prompt
    assert "a fixed fee of 16 is deducted each day" in prompt


def test_observation_json_is_ascii_and_complete():
    world = toy_world(3, 12, seed=0)
    with VendingEnv(world) as env:
        obs = env.reset(seed=1)
    data = json.loads(obs.to_json())
    assert data["date"] == "2025-01-01" and data["day"] == 1 and data["weekday"] == "Wednesday"
    assert data["report"] == obs.report and data["report"]["balance"]["net_assets"] == obs.net_assets

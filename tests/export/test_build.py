import pandas as pd
import pytest

from autovend.export.build import REFERENCE_PRICE_LEVEL_CNY, world_economics
from autovend.world.model import Economics


def test_economics_stay_as_they_are_in_the_rules_currency():
    eco = Economics()
    assert world_economics(eco, "CNY", None, pd.Series([1.0])) is eco


def test_economics_are_converted_at_a_given_rate_to_cents():
    eco = world_economics(Economics(), "USD", 0.14, pd.Series([1.0]))
    assert eco.currency == "USD"
    assert (eco.start_cash, eco.visit_fee, eco.machine_rent_per_day) == (5600.0, 4.9, 0.56)
    assert eco.expired_sale_fine == 140.0
    assert eco.warehouse_rent_per_unit_day == 0.01  # 0.0042 rounds to no rent at all: one cent at least
    assert eco.lead_time_pmf == Economics().lead_time_pmf and eco.horizon_days == 180


def test_without_a_rate_the_catalog_price_level_converts():
    prices = pd.Series([1.5, 2.0, 3.25])  # median 2.0 USD against 6.5 CNY
    eco = world_economics(Economics(), "USD", None, prices)
    assert eco.visit_fee == pytest.approx(round(35.0 * 2.0 / REFERENCE_PRICE_LEVEL_CNY, 2))
    assert eco.start_cash == round(40_000 * 2.0 / 6.5, 2) == 12307.69

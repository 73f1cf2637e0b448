import datetime as dt
import re

import numpy as np
import pytest

from autovend.demand.kernel import product_rates, reference_shelf
from autovend.world.model import CATALOG_COLUMNS, MACHINE_COLUMNS, Economics, World
from autovend.world.toy import toy_size_problem, toy_world


@pytest.fixture(scope="module")
def small() -> World:
    return toy_world()


def test_default_toy_world_is_small_and_valid(small):
    assert isinstance(small, World)
    assert (small.n_machines, small.n_products) == (3, 12)
    assert list(small.machines.columns) == MACHINE_COLUMNS
    assert list(small.catalog.columns) == CATALOG_COLUMNS
    assert small.demand_model.b.shape == (3, 12)
    assert small.start_date == dt.date(2025, 1, 1)
    assert small.horizon_days == 180
    assert (small.machines["capacity"] == 200).all()
    assert small.machines["device_id"].is_unique and small.catalog["sku_id"].is_unique


def test_catalog_has_both_shelf_lives_and_the_paper_margins(small):
    assert set(small.catalog["shelf_life_days"]) == {30, 90}
    margin = 1 - small.catalog["unit_cost"] / small.catalog["ref_price"]
    drinks = small.catalog["category_l1"] == "drinks"
    # costs are rounded to the fen, so allow half a fen on the margin
    assert margin[drinks].between(0.30 - 0.005 / 2.5, 0.40 + 0.005 / 2.5).all()
    assert margin[~drinks].between(0.50 - 0.005 / 3.0, 0.60 + 0.005 / 3.0).all()
    assert ((small.catalog["ref_price"] * 2) % 1 == 0).all()  # multiples of 0.5 CNY


def test_weather_and_calendar_cover_the_horizon(small):
    dates = set(small.weather["date"].dt.date)
    for d in (1, 180, 187):
        assert small.date_of(d) in dates
    cal = small.calendar.set_index(small.calendar["date"].dt.date)
    assert cal["date"].max().date() >= small.date_of(180) + dt.timedelta(days=400)
    assert cal.loc[dt.date(2025, 1, 1), "day_type"] == "holiday"
    assert bool(cal.loc[dt.date(2025, 1, 26), "is_workday"])  # a Sunday made a workday
    assert set(small.forecast["lead"]) == set(range(8))


def test_reference_shelf_sells_25_to_60_units_a_day(small):
    """U = u R, so the reference shelf at full fill sells u R / (1 + u) = the machine's target."""
    for m in range(small.n_machines):
        q_ref, _ = reference_shelf(small.demand_model.b[m], 200, small.demand_model.settings.phi)
        w = small.demand_model.b[m] * np.minimum(
            1.0, q_ref / small.demand_model.settings.phi
        )  # F = 1 by definition of R
        units = product_rates(w, small.demand_model.U[m]).sum()
        assert 25.0 <= units <= 60.0


def test_twenty_machines_follow_the_paper_network():
    w = toy_world(20, 30, seed=1)
    counts = w.machines["site_type"].value_counts().to_dict()
    assert counts == {"worksite": 6, "campus": 2, "residential": 4, "commercial": 6, "office": 2}
    assert w.machines["device_id"].iloc[0] == "CN_WORKSITE_01"


def test_seed_determines_the_world():
    a, b, c = toy_world(seed=5), toy_world(seed=5), toy_world(seed=6)
    assert np.array_equal(a.demand_model.b, b.demand_model.b)
    assert a.catalog.equals(b.catalog) and a.weather.equals(b.weather)
    assert not np.array_equal(a.demand_model.b, c.demand_model.b)


def test_overrides_replace_world_fields_and_size_the_tables():
    w = toy_world(2, 4, name="tiny", economics=Economics(horizon_days=10))
    assert w.name == "tiny" and w.horizon_days == 10
    assert w.weather["date"].max().date() == w.date_of(10) + dt.timedelta(days=7)
    with pytest.raises(TypeError, match="unknown World fields"):
        toy_world(colour="red")


@pytest.mark.parametrize(
    ("size", "message"),
    [
        pytest.param((0, 12), "machines must be a whole number from 1 to 1,000, got 0", id="no-machines"),
        pytest.param((3, 0), "products must be a whole number from 1 to 10,000, got 0", id="no-products"),
        pytest.param((True, 12), "machines must be a whole number from 1 to 1,000, got True", id="boolean"),
        pytest.param((1_001, 1), "got 1001", id="too-many-machines"),
        pytest.param((500, 2_001), "is 1,000,500 machine-product pairs, over the limit of 1,000,000", id="pairs"),
    ],
)
def test_a_toy_world_beyond_its_limits_is_refused_before_anything_is_allocated(size, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        toy_world(*size)
    with pytest.raises(ValueError, match=re.escape("the horizon must be from 1 to 3,660 days, got 3661")):
        toy_world(3, 12, economics=Economics(horizon_days=3_661))
    assert toy_size_problem(1_000, 1_000, 3_660) is None  # the limits themselves are allowed

"""Shared worlds and helpers for the simulator tests (toy worlds built in memory, session-scoped)."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.sim import Simulator
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world


@pytest.fixture(autouse=True)
def _raise_on_float_errors():
    old = np.seterr(all="raise")
    yield
    np.seterr(**old)


@pytest.fixture(scope="session")
def world() -> World:
    """3 machines, 12 products, 40 days from 2025-01-01 (day 1 is the New Year holiday)."""
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=40))


def with_shelf_lives(world: World, lives: list[int]) -> World:
    """The same world with other shelf lives (cycled over the catalog)."""
    cat = world.catalog.copy()
    cat["shelf_life_days"] = [lives[i % len(lives)] for i in range(len(cat))]
    return world.replace(catalog=cat, name=world.name + "-lives")


@pytest.fixture(scope="session")
def short_world(world: World) -> World:
    """The 3x12 world with shelf lives of 3 and 6 days, so expiry happens within a few days."""
    return with_shelf_lives(world, [3, 6])


def advance_to(sim: Simulator, day: int) -> None:
    """End days until `day` has started."""
    while sim.day < day:
        sim.end_day()


def stock(sim: Simulator, device_id: str, sku_id: str, qty: int, *, order_qty: int | None = None) -> None:
    """Order `order_qty` (default qty) units today, wait for them, restock `qty` on the next workday."""
    sim.place_order([{"sku_id": sku_id, "qty": order_qty or qty}])
    while sim.warehouse_units()[sim.sku_index(sku_id)] < qty or not sim.is_workday:
        sim.end_day()
    res = sim.restock([{"device_id": device_id, "sku_id": sku_id, "qty": qty}])
    assert res.all_accepted, res.rejected

"""Shared worlds and helpers for the tool tests (toy worlds in memory; sessions are cheap to build)."""

from __future__ import annotations

from typing import Any

import pytest

from autovend.env.boundary import simulator_of
from autovend.session import ToolSession
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world

# toy calendar from 2025-01-01: day 1 New Year (holiday), days 2-3 workdays, 4-5 weekend, 6-10 workdays


@pytest.fixture(scope="session")
def world() -> World:
    """3 machines, 12 products, 40 days from 2025-01-01."""
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=40))


@pytest.fixture(scope="session")
def wide_world() -> World:
    """3 machines, 60 products (for pagination), 40 days."""
    return toy_world(3, 60, seed=0, economics=Economics(horizon_days=40))


@pytest.fixture(scope="session")
def short_world() -> World:
    """3 machines, 12 products, 4 days (to reach the end of an episode)."""
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=4))


@pytest.fixture
def session(world: World, tmp_path) -> ToolSession:
    s = ToolSession(world, seed=1, trajectory_path=tmp_path / "trajectory.jsonl")
    yield s
    s.close()


def ok(session: ToolSession, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """Call a tool that must succeed; return its content."""
    res = session.call(name, args)
    assert res.ok, res.error
    return res.content


def fail(session: ToolSession, name: str, args: Any = None) -> str:
    """Call a tool that must be refused; return the message."""
    res = session.call(name, args)
    assert not res.ok, res.content
    assert res.content == {"error": res.error}
    return res.error or ""


def stock_warehouse(session: ToolSession, units: dict[str, int]) -> None:
    """Order `units` today and end days until all arrived and the day is a workday."""
    ok(session, "place_order", {"items": [{"sku_id": s, "qty": q} for s, q in units.items()]})
    sim = simulator_of(session)
    while True:
        have = sim.warehouse_units()
        if all(have[sim.sku_index(s)] >= q for s, q in units.items()) and sim.is_workday:
            return
        ok(session, "end_day")


def end_days(session: ToolSession, n: int) -> None:
    for _ in range(n):
        ok(session, "end_day")

"""A shared world for the MCP door's tests (a toy world in memory, as the tool tests use)."""

from __future__ import annotations

import pytest

from autovend.world.model import Economics, World
from autovend.world.toy import toy_world


@pytest.fixture(scope="session")
def world() -> World:
    """3 machines, 12 products, 40 days from 2025-01-01."""
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=40))

"""A tiny hand-made world for the baseline's unit tests: 2 machines, 4 products, 30 days from a Monday."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.setup import new_state
from autovend.agents.baseline.state import Memory, Static


@pytest.fixture
def tiny() -> Static:
    """Machines M1 (site type a) and M2 (b), capacity 100; products A-D (reference margins 1.5, 2, 2, 1.5 CNY).

    A, B, C are subcategory 0 and D subcategory 1, all in one category. Day 1 is a Monday; weekends are off.
    """
    n_days = 30 + 40 + 2
    weekday = (np.arange(n_days) - 1) % 7
    workday = weekday < 5
    workday[0] = False
    return Static(
        horizon=30,
        visit_fee=35.0,
        rent=0.01,
        lead_days=2,
        band=(0.5, 2.0),
        sku_ids=["A", "B", "C", "D"],
        ref_fen=np.array([300, 500, 400, 250], dtype=np.int64),
        cost=np.array([1.5, 3.0, 2.0, 1.0]),
        life=np.array([90, 90, 30, 30], dtype=np.int64),
        l1=np.zeros(4, dtype=np.int64),
        l2=np.array([0, 0, 0, 1], dtype=np.int64),
        n_l1=1,
        n_l2=2,
        device_ids=["M1", "M2"],
        site=np.array([0, 1], dtype=np.int64),
        site_names=["a", "b"],
        n_site=2,
        capacity=np.array([100, 100], dtype=np.int64),
        weekday=weekday.astype(np.int64),
        workday=workday,
    )


@pytest.fixture
def tiny_config() -> BaselineConfig:
    """Three products per machine; 2-day price trials from day 5."""
    return BaselineConfig(starter_skus=3, n_skus=3, trial_days=2, trial_start_day=5)


@pytest.fixture
def memory(tiny: Static, tiny_config: BaselineConfig) -> Memory:
    """The tiny world's opening state (day 1)."""
    return Memory(tiny_config, tiny, new_state(tiny, tiny_config, 1))

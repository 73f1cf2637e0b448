"""The agent's memory: lookups of the static facts, copies that share nothing."""

from __future__ import annotations

from dataclasses import fields

import numpy as np

from autovend.agents.baseline.state import Static, copy_value


def test_indexes_of_ids(tiny):
    assert tiny.sku_index == {"A": 0, "B": 1, "C": 2, "D": 3}
    assert tiny.device_index == {"M1": 0, "M2": 1}
    assert "sku_index" not in {f.name for f in fields(Static)}  # derived, not saved with the state


def test_copy_value_shares_no_mutable_part():
    a, names = np.array([1, 2]), ["x"]
    ca, cn = copy_value(a), copy_value(names)
    a[0], names[0] = 9, "y"
    assert ca.tolist() == [1, 2] and cn == ["x"]
    assert copy_value(3) == 3

"""The agent's books: exposure of a thin shelf, and booking it at the end of a day."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.agents.baseline.observe import exposure, record_exposure


def test_exposure_of_a_thin_shelf():
    # facing 5: 0 units no exposure, 2 units 0.4 of a day, 5 or more a full day
    assert exposure(np.array([[0, 2, 5, 9]]), 5).tolist() == [[0.0, 0.4, 1.0, 1.0]]


def test_record_exposure_books_the_day(memory):
    s = memory.s
    s.shelf[0] = [0, 2, 5, 9]
    record_exposure(memory, 3)
    record_exposure(memory, 4)
    assert s.expo_hist[3, 0] == pytest.approx([0.0, 0.4, 1.0, 1.0])
    assert s.cum_expo[0] == pytest.approx([0.0, 0.8, 2.0, 2.0])  # two days, no discount by default

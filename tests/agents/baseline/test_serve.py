"""Serving a machine: units taken off a shelf go back to the warehouse with their expiry."""

from __future__ import annotations

import numpy as np

from autovend.agents.baseline.serve import returned


def test_returned_units_bring_their_expiry_to_the_warehouse():
    avail, next_expiry = np.array([0, 5, 5]), np.array([0, 20, 20])
    # day 10: 3 units expiring on day 20 into an empty warehouse slot: it now expires on day 20
    returned(0, 3, 20, 10, avail, next_expiry)
    # 2 units whose shelf's first expiry (day 12) was within the 7-day window (those were discarded): the rest
    # can expire from day 18 on, before the warehouse's day 20
    returned(1, 2, 12, 10, avail, next_expiry)
    # units expiring after the warehouse's own do not change its next expiry
    returned(2, 1, 25, 10, avail, next_expiry)
    assert avail.tolist() == [3, 7, 6]
    assert next_expiry.tolist() == [20, 18, 20]
    returned(0, 0, 11, 10, avail, next_expiry)  # nothing returned: nothing changes
    assert avail.tolist() == [3, 7, 6] and next_expiry.tolist() == [20, 18, 20]

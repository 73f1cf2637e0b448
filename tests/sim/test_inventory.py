from collections import Counter

import numpy as np
import pytest

from autovend.sim import inventory as inv


def test_add_keeps_batches_sorted_and_merged():
    b: inv.Batches = []
    inv.add(b, [(40, 5), (10, 3)])
    inv.add(b, [(40, 2), (25, 1), (10, 0)])
    assert b == [[10, 3], [25, 1], [40, 7]]
    assert inv.total(b) == 11


def test_take_is_earliest_expiring_first():
    b = [[10, 3], [25, 1], [40, 7]]
    assert inv.take(b, 5) == [(10, 3), (25, 1), (40, 1)]
    assert b == [[40, 6]]
    assert inv.take(b, 6) == [(40, 6)]
    assert b == []


def test_take_too_many_raises_and_changes_nothing():
    b = [[10, 3], [25, 1]]
    with pytest.raises(ValueError):
        inv.take(b, 5)
    assert b == [[10, 3], [25, 1]]


def test_expired_and_expiring_counts():
    b = [[10, 3], [12, 2], [20, 4]]
    assert inv.expired(b, 9) == 0
    assert inv.expired(b, 10) == 3  # expiry day is the first expired day
    assert inv.expired(b, 12) == 5
    assert inv.expiring(b, 10, 7) == 2  # unexpired on day 10 and expired by day 17: the day-12 batch
    assert inv.expiring(b, 10, 10) == 6  # by day 20 the last batch too
    assert inv.newly_expired(b, 12) == 2
    assert inv.split_expired([(10, 3), (20, 2)], 15) == (2, 3)


def test_lead_time_follows_the_documented_pmf():
    pmf = {2: 0.15, 3: 0.60, 4: 0.15, 5: 0.07, 6: 0.03}
    leads, cdf = inv.lead_time_table(pmf)
    assert leads == (2, 3, 4, 5, 6)
    n = 4000
    counts = Counter(inv.lead_time(7, oid, leads, cdf) for oid in range(1, n + 1))
    for lead, p in pmf.items():
        se = (p * (1 - p) / n) ** 0.5
        assert abs(counts[lead] / n - p) < 4 * se, (lead, counts[lead] / n, p)
    # the same order id always gets the same lead time
    assert inv.lead_time(7, 12, leads, cdf) == inv.lead_time(7, 12, leads, cdf)


def test_lead_time_skips_zero_probability_leads():
    leads, cdf = inv.lead_time_table({1: 0.0, 3: 1.0, 9: 0.0})
    assert {inv.lead_time(1, oid, leads, cdf) for oid in range(1, 200)} == {3}


def test_on_its_expiry_day_a_unit_is_expired_everywhere_the_rule_is_applied():
    """expiry_day is the first expired day: the day before, nothing is expired; on the day, all of it is."""
    from types import SimpleNamespace

    from autovend.sim.sales import _take_sold_units

    assert inv.split_expired([(15, 3), (20, 2)], 14) == (5, 0)
    assert inv.split_expired([(15, 3), (20, 2)], 15) == (2, 3)
    book = inv.ExpiryBook()
    book.add(15, 3, 300)
    assert book.expired(14) == (0, 0) and book.expired(15) == (3, 300) and book.on(15) == (3, 300)
    for day, want in ((14, 0), (15, 4)):
        # a shelf of 10 units expiring on day 15 sells 4 of them: expired sales only on day 15 and after
        state = SimpleNamespace(shelves={(0, 0): [[15, 10]]}, shelf_book=inv.ExpiryBook({15: 10}, {15: 1000}))
        facts = SimpleNamespace(unit_cost=[100])
        sold = _take_sold_units(facts, state, day, np.array([0]), np.array([0]), np.array([[4]]))
        assert int(sold[0, 0]) == want, day
        assert state.shelves[(0, 0)] == [[15, 6]] and state.shelf_book.units == {15: 6}

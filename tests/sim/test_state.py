"""The state of a run at its start, and the end of an episode."""

from __future__ import annotations

import numpy as np
import pytest

from autovend.errors import EpisodeOver
from autovend.sim.facts import WorldFacts
from autovend.sim.state import initial_state


def test_a_run_starts_with_the_start_cash_no_stock_and_reference_prices(world):
    f = WorldFacts.from_world(world)
    s = initial_state(f, seed=5)
    assert (s.seed, s.day, s.done, s.cash_fen, s.next_order_id) == (5, 1, False, 4_000_000, 1)
    assert s.shelf_q.shape == (3, 12) and s.shelf_q.sum() == 0 and s.shelf_n.tolist() == [0, 0, 0]
    assert s.wh_q.sum() == 0 and s.transit_q.sum() == 0 and s.shelves == {} and s.orders == {}
    assert (s.price_fen == f.ref_fen).all() and s.price_fen[2, 1] == 900
    assert s.day_costs == {"purchase": 0, "warehouse_rent": 0, "daily_fee": 0, "visit": 0, "expired_fine": 0}
    assert s.ledger == [] and s.reports == [] and s.day_start is None
    assert s.xi.shape == (3, 40)  # one demand shock per machine and day of the horizon


def test_the_demand_shocks_follow_the_seed(world):
    f = WorldFacts.from_world(world)
    assert np.array_equal(initial_state(f, 5).xi, initial_state(f, 5).xi)
    assert not np.array_equal(initial_state(f, 5).xi, initial_state(f, 6).xi)


def test_an_ended_episode_refuses_further_calls(world):
    s = initial_state(WorldFacts.from_world(world), seed=0)
    s.check_open(40)  # open: nothing happens
    s.done = True
    with pytest.raises(EpisodeOver, match=r"ended after day 40; start a new run with reset\(seed=...\)"):
        s.check_open(40)

"""The client's picture of a sweep: counts, restarts, cost so far and the ETA from the rate of settled days."""

from __future__ import annotations

import pytest

from autovend.sweep.progress import Tracker


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_counts_cost_and_eta():
    clock = Clock()
    tr = Tracker({"a": 10, "b": 10, "c": 10}, finished_before=1, prior_cost=0.5, total=4, clock=clock)
    st = tr.status()
    assert (st.total, st.finished_before, st.waiting, st.running, st.done) == (4, 1, 3, 0, 0)
    assert st.eta_s is None and st.cost_usd == 0.5

    tr.event({"run": "a", "kind": "start"})
    tr.event({"run": "b", "kind": "start"})
    tr.event({"run": "a", "kind": "day", "day": 1, "days": 10, "cost": 0.25})  # the clock starts at the first day
    tr.event({"run": "b", "kind": "day", "day": 1, "days": 10, "cost": 0.125})
    clock.t += 8.0
    for day in (2, 3, 4, 5):
        tr.event({"run": "a", "kind": "day", "day": day, "days": 10, "cost": 0.25 + day / 100})
        tr.event({"run": "b", "kind": "day", "day": day, "days": 10, "cost": 0.125})
    st = tr.status()
    # 10 days settled (5 each) in 8 s: 0.8 s a day; 5 + 5 + 10 days to go -> 16 s
    assert st.eta_s == pytest.approx(16.0)
    assert st.cost_usd == pytest.approx(0.5 + 0.30 + 0.125)
    assert (st.running, st.waiting, st.restarts) == (2, 1, 0)

    clock.t += 2.0
    for day in range(6, 11):
        tr.event({"run": "a", "kind": "day", "day": day, "days": 10})
    tr.outcome("a", "ran")
    tr.event({"run": "b", "kind": "start"})  # b's worker was lost: it starts again (and resumes)
    st = tr.status()
    assert (st.done, st.running, st.restarts) == (1, 1, 1)
    # 15 days settled in 10 s; 5 (b) + 10 (c) to go
    assert st.eta_s == pytest.approx(15 * 10.0 / 15)
    tr.outcome("b", "failed")
    tr.outcome("c", "skipped")
    st = tr.status()
    assert (st.done, st.failed, st.skipped, st.running, st.waiting) == (1, 1, 1, 0, 0)
    assert st.eta_s == 0.0


def test_a_resumed_run_counts_only_the_days_settled_in_this_invocation():
    clock = Clock()
    tr = Tracker({"a": 20}, clock=clock)
    tr.event({"run": "a", "kind": "day", "day": 11, "days": 20})  # resumed from day 10
    clock.t += 3.0
    tr.event({"run": "a", "kind": "day", "day": 13, "days": 20})
    # 3 days (11, 12, 13) in 3 s since day 11 was reported; 7 to go
    assert tr.eta_s() == pytest.approx(7 * 3.0 / 3)


def test_events_of_other_runs_are_ignored():
    tr = Tracker({"a": 5})
    tr.event({"run": "zz", "kind": "day", "day": 1, "days": 5, "cost": 9.0})
    assert tr.cost_usd == 0.0 and tr.status().running == 0

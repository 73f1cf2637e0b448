"""The client's picture of a sweep under way: runs done, running and failed, the API cost so far, an ETA.

    tracker = Tracker(runs={"cn20/baseline-s1-d20": 20, ...}, finished_before=2, prior_cost=0.0)
    tracker.event({"run": "cn20/baseline-s1-d20", "kind": "day", "day": 3, "days": 20, "cost": None})
    tracker.outcome("cn20/baseline-s1-d20", "ran")
    tracker.status()   # SweepStatus(done=..., running=..., eta_s=...)

Events come from the tasks (`start` when a run begins or resumes, `day` after every settled day
with the run's API cost so far, `end`, `failed`); outcomes from the finished Dask futures. The ETA
is the days still to settle over the rate at which days were settled since the first one in this
invocation (all workers together), so it needs one settled day and assumes the days ahead cost what
the days behind did. The cost is what the runs finished before cost plus the latest cost each run of
this invocation reported (a resumed LLM run reports its cost since its start, its earlier days included).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SweepStatus:
    """One picture of the sweep, for the terminal."""

    total: int  # runs in the spec
    finished_before: int  # finished by an earlier invocation
    done: int  # finished in this invocation
    running: int  # started (or resumed) and not ended
    failed: int
    skipped: int  # not started because the cost limit was reached
    timed_out: int  # stopped by the spec's timeout_s (resumable)
    waiting: int  # submitted, not started yet
    restarts: int  # runs started again after their worker was lost (or the task failed and was retried)
    cost_usd: float
    eta_s: float | None
    elapsed_s: float


@dataclass
class _Run:
    days: int
    day: int = 0  # the latest day settled
    first_day: int | None = None  # the first day settled in this invocation
    cost: float | None = None
    starts: int = 0
    state: str = "waiting"  # waiting, running, done, failed, skipped


@dataclass
class Tracker:
    """Collects events and outcomes into a `SweepStatus` (see the module docstring)."""

    runs: Mapping[str, int]  # the runs this invocation submits: name -> days
    finished_before: int = 0
    prior_cost: float = 0.0
    total: int | None = None  # runs in the spec (default: finished_before + len(runs))
    clock: Callable[[], float] = time.monotonic
    _runs: dict[str, _Run] = field(init=False, repr=False)
    _t0: float = field(init=False, repr=False)
    _t_first: float | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self._runs = {name: _Run(days) for name, days in self.runs.items()}
        self._t0 = self.clock()

    def event(self, msg: Mapping[str, Any]) -> None:
        """Take one task event (a dict with `run` and `kind`; see the module docstring); unknown runs are ignored."""
        run = self._runs.get(str(msg.get("run")))
        if run is None or run.state in ("done", "failed", "skipped", "timed_out"):
            return
        kind = msg.get("kind")
        if kind == "start":
            run.starts += 1
            run.state = "running"
        elif kind == "day":
            run.state = "running"
            day = int(msg["day"])
            if run.first_day is None:
                run.first_day = day - 1
                if self._t_first is None:
                    self._t_first = self.clock()
            run.day = max(run.day, day)
        if msg.get("cost") is not None:
            run.cost = float(msg["cost"])

    def outcome(self, name: str, status: str) -> None:
        """Record how a run's task ended: ran, finished, skipped, failed, timed_out or interrupted."""
        run = self._runs.get(name)
        if run is None:
            return
        states = {"ran": "done", "finished": "done", "skipped": "skipped", "timed_out": "timed_out"}
        run.state = states.get(status, "failed")
        if run.state == "done":
            run.day = run.days

    @property
    def cost_usd(self) -> float:
        """The API cost so far: runs finished before plus the latest cost reported by each run."""
        return self.prior_cost + sum(r.cost for r in self._runs.values() if r.cost is not None)

    def eta_s(self) -> float | None:
        """Seconds until the runs still to do are settled, at the rate days were settled so far (None: unknown)."""
        if self._t_first is None:
            return None
        settled = sum(r.day - r.first_day for r in self._runs.values() if r.first_day is not None)
        elapsed = self.clock() - self._t_first
        if settled <= 0 or elapsed <= 0:
            return None
        remaining = sum(r.days - r.day for r in self._runs.values() if r.state in ("waiting", "running"))
        return remaining * elapsed / settled

    def status(self) -> SweepStatus:
        """The sweep as it stands."""
        states = [r.state for r in self._runs.values()]
        total = self.total if self.total is not None else self.finished_before + len(states)
        return SweepStatus(
            total=total,
            finished_before=self.finished_before,
            done=states.count("done"),
            running=states.count("running"),
            failed=states.count("failed"),
            skipped=states.count("skipped"),
            timed_out=states.count("timed_out"),
            waiting=states.count("waiting"),
            restarts=sum(max(r.starts - 1, 0) for r in self._runs.values()),
            cost_usd=self.cost_usd,
            eta_s=self.eta_s(),
            elapsed_s=self.clock() - self._t0,
        )

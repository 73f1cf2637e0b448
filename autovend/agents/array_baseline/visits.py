"""Step 5 for N runs: which machines the baseline serves today, in which order (`baseline.visits`).

Scheduling is the baseline's: a machine on a cycle shorter than `max_cycle_days` is due that many days after
its last service; a weekly one once its weekday has come round (at least `min_gap_days` on), or in any case
`max_cycle_days` plus a week on. The first service waits for the opening stock, expiring units force a
visit, a scheduled visit must pay its fee, a low shelf asks for an extra one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from autovend.agents.array_baseline.estimate import Est
from autovend.agents.array_baseline.rows import fit_within
from autovend.agents.array_baseline.targets import carried, targets
from autovend.agents.baseline.setup import DAYS_PER_WEEK, LOOKAHEAD_DAYS

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class Calendar:
    """The baseline's calendar (`Static.weekday`, `Static.workday`) with what scheduling looks up."""

    weekday: IntArray
    workday: BoolArray

    def next_workday(self, d: int) -> int:
        """The first working day after d (past the calendar's end: its length)."""
        later = np.flatnonzero(self.workday[d + 1 :])
        return d + 1 + int(later[0]) if len(later) else len(self.workday)

    def next_service(
        self, after: IntArray, last: IntArray, cycle: IntArray, slot: IntArray, cfg_max: int, gap: int
    ) -> IntArray:
        """`next_service`: the first working day after `after` on which each machine is due (else the window end)."""
        end = np.minimum(after + LOOKAHEAD_DAYS, len(self.workday) - 1)
        t = after[:, None] + 1 + np.arange(LOOKAHEAD_DAYS)[None, :]
        inside = t <= end[:, None]
        tc = np.minimum(t, len(self.workday) - 1)
        since = t - last[:, None]
        # the first day after `last` on this machine's weekday: from then on the weekday has come round
        first_slot = last + 1 + (slot - self.weekday[np.minimum(last + 1, len(self.weekday) - 1)]) % DAYS_PER_WEEK
        weekly = (since >= gap) & ((t >= first_slot[:, None]) | (since >= cfg_max + DAYS_PER_WEEK))
        due = np.where((cycle < cfg_max)[:, None], since >= cycle[:, None], weekly)
        ok = inside & self.workday[tc] & due
        hit = ok.any(axis=1)
        return np.where(hit, after + 1 + np.argmax(ok, axis=1), end)


def shelf_need(est: Est, n: IntArray, m: IntArray, days: IntArray) -> IntArray:
    """`shelf_need`: units a visit today would bring to each row's machine (targets less shelf, within free room)."""
    book, st = est.book, est.st
    act, _, pos = carried(est, n, m)
    need = np.maximum(targets(est, n, m, days) - book.shelf[n, m], 0)
    free = st.capacity[m] - np.where(book.pk[n, m] >= 0, book.shelf[n, m], 0).sum(axis=1)
    return fit_within(np.where(act, need, 0), act, pos, free)


def opening_ready(est: Est, n: IntArray, m: IntArray, d: int, avail: IntArray) -> BoolArray:
    """First stocking: once most of the opening stock has arrived (or after waiting long enough)."""
    cfg, book = est.cfg, est.book
    act, k, _ = carried(est, n, m)
    target = targets(est, n, m, book.cycle[n, m])
    have = np.where(act, np.minimum(avail[n[:, None], k], target), 0).sum(axis=1)
    waited = d - book.opening_day >= cfg.starter_wait_days
    return (have >= cfg.starter_stock_share * np.maximum(target.sum(axis=1), 1)) | (waited & (have > 0))


def visits_today(est: Est, cal: Calendar, obs: dict[str, np.ndarray], d: int, avail: IntArray) -> IntArray:
    """(N, M) the order in which each run serves its machines today (0 first), -1 where it does not."""
    book, st, cfg = est.book, est.st, est.cfg
    N, M = book.last_visit.shape
    quiet = st.horizon - d < cfg.end_quiet_days
    next_work = cal.next_workday(d)
    n, m = (a.ravel() for a in np.meshgrid(np.arange(N), np.arange(M), indexing="ij"))
    wanted = np.zeros(N * M, dtype=bool)
    decided = np.zeros(N * M, dtype=bool)
    opening = book.first_visit[n, m] == 0
    if opening.any():
        wanted[opening] = opening_ready(est, n[opening], m[opening], d, avail)
    decided |= opening
    # expiring units must come off before the next working day (a look at the shelf, unless they sold)
    look = ~decided & (book.must_visit_by[n, m] > 0) & (next_work > book.must_visit_by[n, m])
    if look.any():
        nl, ml = n[look], m[look]
        nxt = obs["slot_next_expiry"][nl, ml].astype(np.int64)
        held = obs["slot_units"][nl, ml] > 0
        first = np.where(held & (nxt > 0), nxt, np.iinfo(np.int64).max).min(axis=1)
        first = np.where(first == np.iinfo(np.int64).max, 0, first)
        book.must_visit_by[nl, ml] = first
        forced = (held & (obs["slot_expired"][nl, ml] > 0)).any(axis=1) | ((first > 0) & (next_work > first))
        wanted[np.flatnonzero(look)[forced]] = True
        decided[np.flatnonzero(look)[forced]] = True
    rest = ~decided
    cyc = book.cycle[n, m]
    service = cal.next_service(
        d - 1 + 0 * n, book.last_visit[n, m], cyc, book.slot_day[m], cfg.max_cycle_days, cfg.min_gap_days
    )
    sched = rest & (service == d) & (not quiet)
    if sched.any():
        ns, ms = n[sched], m[sched]
        nxt = cal.next_service(
            d + 0 * ns, d + 0 * ns, cyc[sched], book.slot_day[ms], cfg.max_cycle_days, cfg.min_gap_days
        )
        need = shelf_need(est, ns, ms, nxt - d)
        wanted[sched] = need.sum(axis=1) * np.maximum(est.gp_per_unit[ns, ms], 0.0) > st.visit_fee
    extra = rest & ~sched
    if cfg.low_stock_visits and extra.any():
        ne, me = n[extra], m[extra]
        days_left = np.minimum(np.maximum(service[extra], d + 1), st.horizon + 1) - d
        units = np.where(book.pk[ne, me] >= 0, book.shelf[ne, me], 0).sum(axis=1)
        projected = units - est.machine_rate[ne, me] * days_left
        short = np.maximum(0.0, cfg.low_stock_share * st.capacity[me] - projected)
        wanted[extra] = short * est.gp_per_unit[ne, me] > st.visit_fee
    value = (est.machine_rate * est.gp_per_unit).ravel()
    order = np.lexsort((m, -value, n))  # by run, the most profitable first, ties by machine
    want_sorted = wanted[order]
    rank_sorted = np.cumsum(want_sorted.reshape(N, M), axis=1) - 1
    rank = np.full(N * M, -1, dtype=np.int64)
    rank[order] = np.where(want_sorted, rank_sorted.ravel(), -1)
    return rank.reshape(N, M)

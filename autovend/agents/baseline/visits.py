"""Step 5, visits (working days only): the service cycle of each machine and which machines to serve today.

Every machine is served on a cycle of H days: weekly, spread over the weekdays, or shorter when
that earns more gross profit a day net of the visit fee (for each H the targets are fitted to the
machine and expected sales are E[min(D_H, S)]; `cycle_rule` "fixed" keeps every machine weekly).
Extra visits: when expiring units must come off before the next working day, or (unless
`low_stock_visits` is off) when the shelf would fall below `low_stock_share` of capacity before the
next service and the gross profit at stake covers the visit fee. A scheduled visit is
skipped when the units it would bring cannot pay the fee. The first visit waits until most of the
opening stock has arrived. What happens at a visit is in `serve`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from autovend.agents.baseline.observe import read_shelf
from autovend.agents.baseline.setup import DAYS_PER_WEEK, LOOKAHEAD_DAYS
from autovend.agents.baseline.state import BoolArray, FloatArray, IntArray, Memory
from autovend.agents.baseline.targets import machine_targets, machine_targets_by_cycle, normal_loss, shelf_need

if TYPE_CHECKING:
    from autovend.agents.baseline.estimate import Estimates
    from autovend.session import ToolSession

# ------------------------------------------------------------------------------------------------ pure rules


def cycle_value(mu: FloatArray, margin: FloatArray, r: float, stock: IntArray, days: int, visit_fee: float) -> float:
    """Gross profit a day of a `days`-day service cycle, net of the visit fee.

    Expected sales of a product are E[min(D, S)] = mean - sd * L((S - mean) / sd) for demand D over the
    cycle (mean mu * days, variance mean + mean^2 / r) and `stock` S, L the normal loss function;
    products sold at a loss count with margin 0.
    """
    mean = mu * days
    sd = np.sqrt(mean + mean**2 / r)
    sold = mean - sd * normal_loss((stock - mean) / np.maximum(sd, 1e-9))
    return (float((sold * np.maximum(margin, 0.0)).sum()) - visit_fee) / days


def best_cycle(
    mu: FloatArray,
    margin: FloatArray,
    r: float,
    visit_fee: float,
    max_cycle_days: int,
    stock_for: Callable[[int], IntArray],
) -> int:
    """The cycle H in 1..max_cycle_days with the highest `cycle_value` (the shorter one on a tie).

    `stock_for(H)`: the targets the shelf would be filled to for an H-day cycle. A short cycle pays
    more fees, a long one loses more sales to empty slots.
    """
    best, best_value = max_cycle_days, -np.inf
    for H in range(1, max_cycle_days + 1):
        value = cycle_value(mu, margin, r, stock_for(H), H, visit_fee)
        if value > best_value + 1e-9:
            best, best_value = H, value
    return best


def is_due(t: int, last: int, cycle: int, slot: int, weekday: IntArray, max_cycle_days: int, min_gap_days: int) -> bool:
    """Whether the schedule calls for a machine on working day t, last served on `last`.

    A machine on a cycle shorter than `max_cycle_days` is due `cycle` days after its last service. A
    weekly one is due once its weekday `slot` has come round since the last service and at least
    `min_gap_days` have passed, and in any case `max_cycle_days` plus a week after it.
    """
    gap = t - last
    if cycle < max_cycle_days:
        return gap >= cycle
    if gap < min_gap_days:
        return False
    return bool((weekday[last + 1 : t + 1] == slot).any()) or gap >= max_cycle_days + DAYS_PER_WEEK


def next_workday(workday: BoolArray, d: int) -> int:
    """The first working day after d (past the calendar's end: its length)."""
    for t in range(d + 1, len(workday)):
        if workday[t]:
            return t
    return len(workday)


def stock_shortfall(shelf_units: int, rate: float, days: int, capacity: int, low_share: float) -> float:
    """Units by which the shelf would fall below `low_share` of capacity after selling `rate` a day for `days`."""
    projected = shelf_units - rate * days
    return max(0.0, low_share * capacity - projected)


# ------------------------------------------------------------------------------------------------ one machine


def machine_cycle(mem: Memory, est: Estimates, m: int) -> int:
    """Service interval of machine m (days, up to `max_cycle_days`): `best_cycle` with its targets.

    With `cycle_rule` "fixed", every machine keeps the `max_cycle_days` cycle.
    """
    s, st, cfg = mem.s, mem.st, mem.cfg
    ks = np.flatnonzero(s.active[m])
    if cfg.cycle_rule == "fixed" or not len(ks):
        return cfg.max_cycle_days
    levels = machine_targets_by_cycle(mem, est, m, cfg.max_cycle_days)
    return best_cycle(
        est.mu[m, ks],
        est.margin[m, ks],
        est.r[m],
        st.visit_fee,
        cfg.max_cycle_days,
        lambda H: levels[H - 1],
    )


def next_service(mem: Memory, m: int, after: int, last: int, cycle: int) -> int:
    """The first working day after `after` on which the schedule calls for machine m."""
    s, st, cfg = mem.s, mem.st, mem.cfg
    end = min(after + LOOKAHEAD_DAYS, len(st.workday) - 1)
    for t in range(after + 1, end + 1):
        if st.workday[t] and is_due(t, last, cycle, int(s.slot[m]), st.weekday, cfg.max_cycle_days, cfg.min_gap_days):
            return t
    return end


def opening_ready(mem: Memory, est: Estimates, m: int, d: int, avail: IntArray) -> bool:
    """First stocking: once most of the opening stock has arrived (or after waiting long enough)."""
    s, cfg = mem.s, mem.cfg
    target = machine_targets(mem, est, m, int(est.cycle[m]))
    ks = np.flatnonzero(s.active[m])
    have = np.minimum(avail[ks], target).sum()
    waited = d - s.opening_day >= cfg.starter_wait_days
    return bool(have >= cfg.starter_stock_share * max(target.sum(), 1) or (waited and have > 0))


# ------------------------------------------------------------------------------------------------ today's visits


def visits_today(session: ToolSession, mem: Memory, d: int, est: Estimates, avail: IntArray) -> list[int]:
    """Machines to serve today, the most profitable first (they get scarce stock first)."""
    st, cfg = mem.st, mem.cfg
    quiet = st.horizon - d < cfg.end_quiet_days
    next_work = next_workday(st.workday, d)
    out = [m for m in range(len(mem.s.last_visit)) if _wanted(session, mem, m, d, est, avail, quiet, next_work)]
    value = est.machine_rate * est.gp_per_unit
    return sorted(out, key=lambda m: (-value[m], m))


def _wanted(
    session: ToolSession, mem: Memory, m: int, d: int, est: Estimates, avail: IntArray, quiet: bool, next_work: int
) -> bool:
    """Whether machine m is served today: opening, expiring units, a paying scheduled visit or a low shelf."""
    s, st, cfg = mem.s, mem.st, mem.cfg
    if not s.first_visit[m]:
        return opening_ready(mem, est, m, d, avail)
    if s.must_visit_by[m] and next_work > s.must_visit_by[m] and _expiry_forces_visit(session, mem, m, next_work):
        return True
    cycle = int(est.cycle[m])
    service = next_service(mem, m, d - 1, int(s.last_visit[m]), cycle)  # first scheduled day >= d
    if service == d and not quiet:
        nxt = next_service(mem, m, d, d, cycle)
        need = shelf_need(mem, est, m, nxt - d)
        return bool(need.sum() * max(est.gp_per_unit[m], 0.0) > st.visit_fee)
    if not cfg.low_stock_visits:
        return False
    # an extra visit: the shelf would run low before its next service and the profit at stake pays the fee
    days_left = min(max(service, d + 1), st.horizon + 1) - d
    short = stock_shortfall(int(s.shelf[m].sum()), est.machine_rate[m], days_left, st.capacity[m], cfg.low_stock_share)
    return bool(short * est.gp_per_unit[m] > st.visit_fee)


def _expiry_forces_visit(session: ToolSession, mem: Memory, m: int, next_work: int) -> bool:
    """Units on machine m expire before the next working day, unless they have sold since: look again."""
    s = mem.s
    detail = read_shelf(session, mem, m)
    s.must_visit_by[m] = min((line.next_expiry for line in detail if line.next_expiry), default=0)
    return any(line.expired for line in detail) or bool(s.must_visit_by[m] and next_work > s.must_visit_by[m])

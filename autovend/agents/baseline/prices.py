"""Step 4, prices: local gross-profit trials of one multiplier of the reference prices per price group.

The machines of a price group (by default the whole network; `price_groups="site_type"` gives each
site type its own, `"machine"` each machine, whose trial then compares its two halves in time)
price every product at one multiplier of its reference price. A trial compares the incumbent
multiplier with a candidate one step away in a crossover: for the first half of `trial_days` half
of the machines take the candidate, then the halves swap. The candidate is kept if gross profit a
day under it beats the incumbent's by `min_gain` (mean over machines of the log ratio, so each
machine is its own control and day-to-day effects fall on both arms). Trials keep going in the
direction that last won and turn around when one fails; after two failures in a row the price
holds for `hold_days`. All products of a machine move together because customers substitute
between them: a product-by-product trial would mostly measure demand moved from its neighbours.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from autovend.agents.baseline.calls import batched
from autovend.agents.baseline.state import IntArray, Memory, State
from autovend.sim.money import FEN_PER_CNY

if TYPE_CHECKING:
    from autovend.session import ToolSession

# ------------------------------------------------------------------------------------------------ pure rules


def price_fen(multiplier_pct: int, ref_fen: npt.ArrayLike, band: tuple[float, float]) -> IntArray:
    """Prices in fen: the reference price times `multiplier_pct`/100, rounded, kept inside the band."""
    ref = np.asarray(ref_fen, dtype=np.int64)
    p = (ref * int(multiplier_pct) + 50) // 100
    lo = np.ceil(ref * band[0] - 1e-9).astype(np.int64)
    hi = np.floor(ref * band[1] + 1e-9).astype(np.int64)
    return np.clip(p, lo, hi)


def price_fen_matrix(mult_pct: IntArray, ref_fen: IntArray, band: tuple[float, float]) -> IntArray:
    """(M, K) prices in fen for per-machine multipliers (percent) of the reference prices.

    Each distinct multiplier is priced once (machines of a price group share theirs).
    """
    pcts, rows = np.unique(np.asarray(mult_pct, dtype=np.int64), return_inverse=True)
    return np.stack([price_fen(int(p), ref_fen, band) for p in pcts])[rows.reshape(-1)]


def crossover_effect(gp_sum: npt.ArrayLike, days: npt.ArrayLike) -> float | None:
    """Mean over machines of log(gross profit a day under the candidate / under the incumbent).

    `gp_sum` and `days` are (machines, 2): column 0 the incumbent arm, column 1 the candidate. Machines
    without days in both arms or without a positive gross profit in either are left out; None if none is left.
    """
    gp = np.asarray(gp_sum, dtype=float)
    n = np.asarray(days, dtype=float)
    ok = (n > 0).all(axis=1)
    mean = np.divide(gp, n, out=np.zeros_like(gp), where=n > 0)
    ok &= (mean > 0).all(axis=1)
    if not ok.any():
        return None
    return float(np.mean(np.log(mean[ok, 1] / mean[ok, 0])))


def crossover_arm(group: npt.ArrayLike, day: int, start: npt.ArrayLike, trial_days: int) -> IntArray:
    """Arm of each machine on `day` of a crossover trial begun on `start`: 0 incumbent, 1 candidate.

    Group-0 machines take the incumbent in the first half and the candidate in the second; group 1 the reverse.
    """
    half = (day - np.asarray(start, dtype=np.int64)) // (trial_days // 2)
    return (np.asarray(group, dtype=np.int64) + half) % 2


def crossover_halves(price_group: IntArray) -> IntArray:
    """Crossover halves: the machines of each price group alternate 0, 1, 0, ... in world order."""
    out = np.zeros(len(price_group), dtype=np.int64)
    for g in np.unique(price_group):
        idx = np.flatnonzero(price_group == g)
        out[idx] = np.arange(len(idx)) % 2
    return out


def trial_kept(effect: float | None, min_gain: float) -> bool:
    """Whether a trial's candidate wins: gross profit a day rose by more than `min_gain` (log scale)."""
    return effect is not None and effect > np.log1p(min_gain)


def next_candidate(mult: int, direction: int, step: int, lo: int, hi: int) -> tuple[int | None, int]:
    """The candidate multiplier one step from `mult` (percent) within [lo, hi], and the turns that took.

    A step past a bound counts as a failed direction: the direction turns and the other side is tried
    (one turn); when both sides are out of bounds there is no candidate (two turns).
    """
    for turns in range(2):
        cand = mult + direction * step
        if lo <= cand <= hi:
            return cand, turns
        direction = -direction
    return None, 2


# ------------------------------------------------------------------------------------------------ trials


def update_trials(mem: Memory, d: int) -> None:
    """Book yesterday's gross profit to its trial arm; settle finished trials; start new ones."""
    s, cfg = mem.s, mem.cfg
    if d > 1:
        _book_arms(s, (d - 1) % cfg.window_days)
    ready = bool((s.first_visit > 0).all()) and d >= cfg.trial_start_day
    for g in range(len(s.mult)):
        if s.trial_start[g] and d - s.trial_start[g] >= cfg.trial_days:
            _settle(mem, g, d)
        if not s.trial_start[g] and ready and d >= s.hold_until[g]:
            _start(mem, g, d)


def _book_arms(s: State, slot: int) -> None:
    """Add the gross profit of the machine-days in ring slot `slot` to the arm each machine was on."""
    arm = s.arm_hist[slot]
    gp = s.gp_hist[slot]
    for m in np.flatnonzero(arm >= 0).tolist():
        s.gp_sum[m, arm[m]] += gp[m]
        s.gp_n[m, arm[m]] += 1


def _settle(mem: Memory, g: int, d: int) -> None:
    """End price group g's trial: keep the candidate if it won, else turn around; log the trial."""
    s, cfg = mem.s, mem.cfg
    members = s.price_group == g
    effect = crossover_effect(s.gp_sum[members], s.gp_n[members])
    kept = trial_kept(effect, cfg.min_gain)
    s.trials.append((d, s.price_group_names[g], int(s.mult[g]), int(s.cand[g]), effect or 0.0, kept))
    if kept:
        s.mult[g] = s.cand[g]
        s.fails[g] = 0
    else:
        _turn(s, g, d, cfg.hold_days)
    s.trial_start[g] = 0


def _start(mem: Memory, g: int, d: int) -> None:
    """Start a trial for price group g one step from its incumbent, unless no step is in bounds or it must hold."""
    s, cfg = mem.s, mem.cfg
    lo, hi = (round(x * 100) for x in cfg.multiplier_bounds)
    step = round(cfg.price_step * 100)
    cand, turns = next_candidate(int(s.mult[g]), int(s.direction[g]), step, lo, hi)
    for _ in range(turns):
        _turn(s, g, d, cfg.hold_days)
    if cand is None or d < s.hold_until[g]:
        return
    members = s.price_group == g
    s.cand[g] = cand
    s.trial_start[g] = d
    s.gp_sum[members] = 0.0
    s.gp_n[members] = 0


def _turn(s: State, g: int, d: int, hold_days: int) -> None:
    """A trial direction failed: turn around; after two failures in a row, hold the price a while."""
    s.direction[g] = -s.direction[g]
    s.fails[g] += 1
    if s.fails[g] >= 2:
        s.fails[g] = 0
        s.hold_until[g] = d + hold_days


# ------------------------------------------------------------------------------------------------ today's prices


def arms_today(mem: Memory, d: int) -> IntArray:
    """Today's multiplier of each machine: its group's incumbent, or the candidate for its trial arm."""
    s, cfg = mem.s, mem.cfg
    start = s.trial_start[s.price_group]
    arm = np.where(start > 0, crossover_arm(s.group, d, start, cfg.trial_days), -1).astype(np.int8)
    s.arm_hist[d % cfg.window_days] = arm
    return np.where(arm == 1, s.cand[s.price_group], s.mult[s.price_group])


def set_prices(session: ToolSession, mem: Memory, mult_today: IntArray) -> None:
    """Put today's multiplier on every product a machine carries or holds."""
    s, st = mem.s, mem.st
    want = price_fen_matrix(mult_today, st.ref_fen, st.band)
    scope = s.active | (s.shelf > 0)
    ms, ks = np.nonzero(scope & (want != s.price))
    if not len(ms):
        return
    items = [
        {"device_id": st.device_ids[m], "sku_id": st.sku_ids[k], "price": int(want[m, k]) / FEN_PER_CNY}
        for m, k in zip(ms.tolist(), ks.tolist(), strict=True)
    ]
    batched(session, "adjust_price", items)
    s.price[ms, ks] = want[ms, ks]

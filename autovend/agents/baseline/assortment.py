"""Step 8, assortment: the opening assortment, and the review of a machine's products at its visits.

At visits, after `min_trial_days` of exposure: drop products whose expected gross profit a day is
below `drop_ratio` x the machine's median (they sell down, unrestocked); fill free slots with
untried products (exploration, while `explore_until_day`) and with the best-scoring products
proven elsewhere; swap the weakest for a proven product scoring `swap_ratio` times more. A product
is replaced only if the gain expected over the rest of the run exceeds the value of its units that
no other machine would use. The opening assortment (day 1, nothing sold yet) spreads
`starter_skus` products per machine over every subcategory, highest reference margin first, giving
different machines different products so that the network explores broadly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from autovend.agents.baseline.state import BoolArray, FloatArray, IntArray, Memory, State, Static
from autovend.sim.money import FEN_PER_CNY

if TYPE_CHECKING:
    from autovend.agents.baseline.estimate import Estimates

MIN_JUDGED_FOR_DROPS = 3  # a machine median needs at least this many judged products

# ------------------------------------------------------------------------------------------------ pure rules


def spread_quota(sizes: npt.ArrayLike, total: int) -> IntArray:
    """`total` slots shared among groups in proportion to sqrt(size) (largest remainders), at most size each."""
    sizes = np.asarray(sizes, dtype=np.int64)
    w = np.sqrt(sizes.astype(float))
    exact = total * w / w.sum()
    q = np.minimum(np.floor(exact).astype(np.int64), sizes)
    order = np.lexsort((np.arange(len(sizes)), -(exact - q)))
    left = total - int(q.sum())
    while left > 0 and (q < sizes).any():
        for i in order:
            if left <= 0:
                break
            if q[i] < sizes[i]:
                q[i] += 1
                left -= 1
    return q


def starter_assortment(st: Static, n: int) -> BoolArray:
    """The opening assortment: n products per machine over every subcategory, highest margin first.

    Slots go to subcategories in proportion to the square root of their size; within a subcategory
    products are ranked by reference margin in CNY (reference price minus unit cost), and machine j
    takes the ranks after those of machine j - 1, so the network tries many different products.
    """
    M, K = len(st.device_ids), len(st.sku_ids)
    out = np.zeros((M, K), dtype=bool)
    sizes = np.bincount(st.l2, minlength=st.n_l2)
    quota = spread_quota(sizes, min(n, K))
    margin = st.ref_fen / FEN_PER_CNY - st.cost
    for g in range(st.n_l2):
        members = np.flatnonzero(st.l2 == g)
        if not len(members) or not quota[g]:
            continue
        ranked = members[np.lexsort((members, -margin[members]))]
        q = int(quota[g])
        for j in range(M):
            pos = (j * q + np.arange(q)) % len(ranked)
            out[j, ranked[pos]] = True
    return out


def replacement_pays(new_score: float, old_score: float, days_left: int, sunk: float) -> bool:
    """Whether replacing a product pays: the gain in gross profit a day over `days_left` exceeds `sunk`."""
    return (new_score - old_score) * days_left > sunk


# ------------------------------------------------------------------------------------------------ review


@dataclass
class _Review:
    """What the review of machine m on day d works from (scores taken before any change)."""

    m: int
    d: int
    days_left: int  # days the successor of a product would sell before the run ends
    score: FloatArray  # (K,) expected gross profit a day of each product at the machine
    cand_ok: BoolArray  # (K,) products that may come in (cleared as they do)
    cand_score: FloatArray  # (K,) expected gross profit a day of a newcomer (its prior)
    network_expo: FloatArray  # (K,) exposure-days over the network
    carried: BoolArray  # (K,) carried by some machine before the review


def review(mem: Memory, est: Estimates, m: int, d: int, avail: IntArray) -> None:
    """Drop poor sellers, fill free slots (exploring while allowed), swap in clearly better products.

    A carried product is replaced only when the gain expected over the rest of the run (its
    successor's gross profit a day minus its own, from the time the successor can be on the shelf)
    exceeds what replacing it throws away: its units on the shelf and in the warehouse when no other
    machine carries it.
    """
    s, st, cfg = mem.s, mem.st, mem.cfg
    if not s.first_visit[m] or d - s.first_visit[m] < cfg.min_trial_days:
        return
    rv = _Review(
        m=m,
        d=d,
        days_left=max(st.horizon - d - st.lead_days - cfg.lead_allowance_days - int(s.cycle[m]), 0),
        score=est.mu[m] * est.margin[m],
        cand_ok=~s.active[m] & ~s.dropped[m] & ~s.phase_out[m] & (est.margin[m] > 0),
        cand_score=est.prior[m] * est.margin[m],
        network_expo=s.cum_expo.sum(axis=0),
        carried=np.any(s.active, axis=0),
    )
    _drop_poor(mem, rv, avail)
    _fill_free_slots(mem, rv)
    _swap_in_proven(mem, rv, avail)


def _judged(mem: Memory, m: int) -> IntArray:
    """Products machine m carries that have had `min_trial_days` of exposure there."""
    s = mem.s
    act = np.flatnonzero(s.active[m])
    return act[s.cum_expo[m, act] >= mem.cfg.min_trial_days]


def _sunk(mem: Memory, m: int, k: int, avail: IntArray) -> float:
    """What replacing product k at machine m throws away: its shelf and warehouse units if no other machine has it."""
    s = mem.s
    if s.active[:, k].sum() > 1:
        return 0.0
    return float((s.shelf[m, k] + avail[k]) * mem.st.cost[k])


def _drop_poor(mem: Memory, rv: _Review, avail: IntArray) -> None:
    """Drop the products scoring below `drop_ratio` x the machine median, if a newcomer would pay for it."""
    cfg = mem.cfg
    pool = np.flatnonzero(rv.cand_ok)
    best_alt = float(rv.cand_score[pool].max()) if len(pool) else 0.0
    judged = _judged(mem, rv.m)
    if len(judged) < MIN_JUDGED_FOR_DROPS:
        return
    median = float(np.median(rv.score[judged]))
    poor = judged[rv.score[judged] < cfg.drop_ratio * median]
    poor = poor[np.lexsort((poor, rv.score[poor]))][: cfg.max_drops_per_visit]
    for k in poor.tolist():
        if replacement_pays(best_alt, rv.score[k], rv.days_left, _sunk(mem, rv.m, k, avail)):
            drop(mem.s, rv.m, k)


def _fill_free_slots(mem: Memory, rv: _Review) -> None:
    """Fill free slots: first untried products (while exploring), then the best-scoring candidates."""
    s, cfg = mem.s, mem.cfg
    free = cfg.n_skus - int(s.active[rv.m].sum())
    if free > 0 and rv.d <= cfg.explore_until_day and cfg.explore_slots_per_visit:
        fresh = np.flatnonzero(rv.cand_ok & (rv.network_expo < cfg.proven_exposure_days) & ~rv.carried)
        pick = fresh[np.lexsort((fresh, -rv.cand_score[fresh]))][: min(free, cfg.explore_slots_per_visit)]
        for k in pick.tolist():
            add(s, rv.m, k, rv.d)
            rv.cand_ok[k] = False
        free -= len(pick)
    if free > 0:
        pool = np.flatnonzero(rv.cand_ok)
        pick = pool[np.lexsort((pool, -rv.cand_score[pool]))][:free]
        for k in pick.tolist():
            add(s, rv.m, k, rv.d)
            rv.cand_ok[k] = False


def _swap_in_proven(mem: Memory, rv: _Review, avail: IntArray) -> None:
    """Replace the weakest judged product by a proven one scoring `swap_ratio` times more, while that pays."""
    s, cfg = mem.s, mem.cfg
    proven = np.flatnonzero(rv.cand_ok & (rv.network_expo >= cfg.proven_exposure_days))
    proven = proven[np.lexsort((proven, -rv.cand_score[proven]))]
    for k in proven[: cfg.max_swaps_per_visit].tolist():
        judged = _judged(mem, rv.m)
        if not len(judged):
            break
        worst = int(judged[np.lexsort((judged, rv.score[judged]))][0])
        if rv.cand_score[k] <= cfg.swap_ratio * max(rv.score[worst], 0.0):
            break
        if not replacement_pays(rv.cand_score[k], rv.score[worst], rv.days_left, _sunk(mem, rv.m, worst, avail)):
            break
        drop(s, rv.m, worst)
        add(s, rv.m, k, rv.d)


def drop(s: State, m: int, k: int) -> None:
    """Stop carrying product k at machine m; it sells down if units are left, and is not offered there again."""
    s.active[m, k] = False
    s.dropped[m, k] = True
    s.phase_out[m, k] = s.shelf[m, k] > 0


def add(s: State, m: int, k: int, d: int) -> None:
    """Start carrying product k at machine m from day d."""
    s.active[m, k] = True
    s.active_since[m, k] = d

"""Step 8 for many reviewed machines at once: `autovend.agents.baseline.assortment.review`.

Drop poor sellers (when a newcomer would pay for it), fill free places (untried products while exploring, then
the best candidates), swap in proven products; every choice in the baseline's order with its ties broken the
same way (the lower product number first). Rows are (run, machine) pairs of different runs.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.agents.array_baseline.estimate import Est, RowGain
from autovend.agents.array_baseline.picks import best_columns
from autovend.arrays.kernel import nonzero

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
MIN_JUDGED_FOR_DROPS = 3


class SlotsFull(ValueError):
    """A machine needs more products at once than the env has slots."""


def _k_wide(values: np.ndarray, pk: IntArray, K: int, fill: object = 0) -> np.ndarray:
    """Rows' slot values spread over the catalog (R, K)."""
    R = len(pk)
    out = np.full((R, K), fill, dtype=np.asarray(values).dtype)
    r, s = nonzero(pk >= 0)
    out[r, pk[r, s]] = values[r, s]
    return out


def dropped_wide(est: Est, n: IntArray, m: IntArray) -> BoolArray:
    """(R, K) the products dropped at each row's machine (entries marked `dropped`)."""
    book = est.book
    out = np.zeros((len(n), book.index.shape[2]), dtype=bool)
    r, p = nonzero(book.dropped[n, m])
    out[r, book.ek[n[r], m[r], p]] = True
    return out


def add(est: Est, n: IntArray, m: IntArray, k: IntArray) -> None:
    """Start carrying product k at (run n, machine m): the first free slot, and its entry (rows distinct)."""
    book = est.book
    if not len(n):
        return
    # a free slot, else one whose dropped product sold out (it goes after the review, as its phase-out ends)
    free = book.pk[n, m] < 0
    free = np.where(np.asarray(free.any(axis=1))[:, None], free, book.phase[n, m] & (book.shelf[n, m] == 0))
    if not free.any(axis=1).all():
        raise SlotsFull(f"a machine needs more than {book.pk.shape[2]} products at once; make the env with more slots")
    s = np.argmax(free, axis=1)
    book.pk[n, m, s] = k
    book.set_active(n, m, s, True)
    book.phase[n, m, s] = False
    book.shelf[n, m, s] = 0
    book.entries(n, m, k)


def drop(est: Est, n: IntArray, m: IntArray, s: IntArray) -> None:
    """Stop carrying slot s's product: it sells down if units are left (else the slot is free); not again here."""
    book = est.book
    p = book.entries(n, m, book.pk[n, m, s])
    book.dropped[n, m, p] = True
    book.set_active(n, m, s, False)
    left = book.shelf[n, m, s] > 0
    book.phase[n, m, s] = left
    book.pk[n, m, s] = np.where(left, book.pk[n, m, s], -1)


def top(score: FloatArray, valid: BoolArray, count: IntArray) -> tuple[IntArray, BoolArray]:
    """Per row, the `count` valid columns with the highest score (ties: the lower column), best first.

    Returns (columns, ok) of shape (R, max count): ok marks the picks (a row may have fewer). Compiled
    (`picks.best_columns`, one pass a row); the picks are `top_sorted`'s, NaN scores included.
    """
    R, K = score.shape
    width = min(int(count.max()) if R else 0, K)
    cols = np.zeros((R, width), dtype=np.int64)
    ok = np.zeros((R, width), dtype=bool)
    if width:
        best_columns(score, valid, np.asarray(count, dtype=np.int64), width, cols, ok)
    return cols, ok


def top_sorted(key: FloatArray, valid: BoolArray, count: IntArray, width: int) -> tuple[IntArray, BoolArray]:
    """`top` of the keys (-score, inf where not valid) by a partial sort of each row and a sort of its best."""
    R, K = key.shape
    if width < K:  # only the columns up to the width-th best score (and its ties) can be picked
        bound = np.partition(key, width - 1, axis=1)[:, width - 1]
        valid = valid & (key <= bound[:, None])
    r, c = nonzero(valid)
    kc = key[r, c]
    order = np.lexsort((c, kc, r))
    r, c = r[order], c[order]
    first = np.r_[True, r[1:] != r[:-1]] if len(r) else np.zeros(0, dtype=bool)
    i = np.arange(len(r))
    rank = i - np.maximum.accumulate(np.where(first, i, 0)) if len(r) else i
    keep = rank < np.minimum(count[r], width)
    cols = np.zeros((R, width), dtype=np.int64)
    ok = np.zeros((R, width), dtype=bool)
    cols[r[keep], rank[keep]] = c[keep]
    ok[r[keep], rank[keep]] = True
    return cols, ok


def review(
    est: Est, n: IntArray, m: IntArray, d: int, avail: IntArray, network_expo: FloatArray, gain: RowGain | None = None
) -> None:
    """Review the assortment of rows (run n, machine m) served today (see the module docstring).

    gain: the rows' `RowGain`, when the caller has one.
    """
    book, st, cfg = est.book, est.st, est.cfg
    first = book.first_visit[n, m]
    go = (first > 0) & (d - first >= cfg.min_trial_days)
    n, m = n[go], m[go]
    if not len(n):
        return
    K = len(st.sku_ids)
    days_left = np.maximum(st.horizon - d - st.lead_days - cfg.lead_allowance_days - book.cycle[n, m], 0)
    margin = est.margin_rows(n, m)
    pk = book.pk[n, m]
    act_k = _k_wide(book.active[n, m], pk, K, False)
    phase_k = _k_wide(book.phase[n, m], pk, K, False)
    dropped_k = dropped_wide(est, n, m)
    cand_ok = ~act_k & ~dropped_k & ~phase_k & (margin > 0)
    cand_score = est.prior_rows(n, m) * margin if gain is None else gain(go)
    carried = _carried(est, n)
    _drop_poor(est, n, m, cand_ok, cand_score, days_left, avail)
    _fill_free(est, n, m, d, cand_ok, cand_score, network_expo[n], carried)
    _swap_in(est, n, m, cand_ok, cand_score, network_expo[n], days_left, avail)


def _carried(est: Est, n: IntArray) -> BoolArray:
    """(R, K) products carried by some machine of each row's run, now."""
    return est.book.carriers[n] > 0


def _judged(est: Est, n: IntArray, m: IntArray) -> BoolArray:
    """(R, S) carried products with `min_trial_days` of exposure at the machine."""
    book = est.book
    act = book.active[n, m]
    k = np.where(act, book.pk[n, m], 0)
    p = np.maximum(book.index[n[:, None], m[:, None], k].astype(np.int64), 0)
    return act & (book.ce[n[:, None], m[:, None], p] >= est.cfg.min_trial_days)


def _score(est: Est, n: IntArray, m: IntArray) -> FloatArray:
    """(R, S) expected gross profit a day of each slot's product at its machine."""
    k = np.maximum(est.book.pk[n, m], 0)
    nn, mm = n[:, None], m[:, None]
    return est.slot_mu(n, m) * est.margin(nn, mm, k)


def _sunk(est: Est, n: IntArray, m: IntArray, s: IntArray, avail: IntArray) -> FloatArray:
    """What replacing slot s's product throws away: its shelf and warehouse units if no other machine has it."""
    book, st = est.book, est.st
    k = book.pk[n, m, s]
    others = book.carriers[n, k]
    value = (book.shelf[n, m, s] + avail[n, k]) * st.cost[k]
    return np.where(others > 1, 0.0, value.astype(np.float64))


def _drop_poor(
    est: Est,
    n: IntArray,
    m: IntArray,
    cand_ok: BoolArray,
    cand_score: FloatArray,
    days_left: IntArray,
    avail: IntArray,
) -> None:
    cfg = est.cfg
    best_alt = np.where(cand_ok, cand_score, -np.inf).max(axis=1)
    best_alt = np.where(cand_ok.any(axis=1), best_alt, 0.0)
    judged = _judged(est, n, m)
    score = _score(est, n, m)
    count = judged.sum(axis=1)
    rows = np.flatnonzero(count >= MIN_JUDGED_FOR_DROPS)
    if not len(rows):
        return
    sc = np.where(judged[rows], score[rows], np.nan)
    median = _median(sc, count[rows])
    k = est.book.pk[n[rows], m[rows]]
    poor = judged[rows] & (score[rows] < cfg.drop_ratio * median[:, None])
    # the poorest first (ties: the lower product number), at most max_drops_per_visit
    key = np.where(poor, score[rows], np.inf)
    order = np.lexsort((np.where(poor, k, np.iinfo(np.int64).max), key), axis=1)[:, : cfg.max_drops_per_visit]
    take = np.take_along_axis(poor, order, axis=1)
    r, j = nonzero(take)
    s = order[r, j]
    rr = rows[r]
    sunk = _sunk(est, n[rr], m[rr], s, avail)
    pays = (best_alt[rr] - score[rr, s]) * days_left[rr] > sunk
    drop(est, n[rr][pays], m[rr][pays], s[pays])


def first_lowest(key: FloatArray, tie: IntArray) -> IntArray:
    """`np.lexsort((tie, key), axis=1)[:, 0]`: each row's lowest key, ties by the lowest `tie`, then the first."""
    R = len(key)
    top_tie = np.iinfo(np.int64).max
    low = np.fmin.reduce(key, axis=1) if key.shape[1] else np.full(R, np.nan)  # NaN keys sort last
    at = key == low[:, None]
    t = np.where(at, tie, top_tie)
    out = np.argmin(t, axis=1)
    rows = np.arange(R)
    plain = t[rows, out] == top_tie  # no tie value below the largest: the first of the lowest keys
    out[plain] = np.argmax(at[plain], axis=1)
    odd = ~at.any(axis=1)  # all NaN: as the lexsort has it
    if odd.any():
        out[odd] = np.lexsort((tie[odd], key[odd]), axis=1)[:, 0]
    return out


def _median(values: FloatArray, count: IntArray) -> FloatArray:
    """np.median of each row's first `count` values among the non-NaN ones (NaN elsewhere)."""
    srt = np.sort(values, axis=1)  # NaN last
    lo = (count - 1) // 2
    hi = count // 2
    a = np.take_along_axis(srt, lo[:, None], axis=1)[:, 0]
    b = np.take_along_axis(srt, hi[:, None], axis=1)[:, 0]
    return np.where(lo == hi, a, (a + b) / 2.0)


def _fill_free(
    est: Est,
    n: IntArray,
    m: IntArray,
    d: int,
    cand_ok: BoolArray,
    cand_score: FloatArray,
    network_expo: FloatArray,
    carried: BoolArray,
) -> None:
    book, cfg = est.book, est.cfg
    free = cfg.n_skus - book.active[n, m].sum(axis=1)
    if d <= cfg.explore_until_day and cfg.explore_slots_per_visit:
        fresh = cand_ok & (network_expo < cfg.proven_exposure_days) & ~carried
        want = np.where(free > 0, np.minimum(free, cfg.explore_slots_per_visit), 0)
        order, ok = top(cand_score, fresh, want)
        _add_picks(est, n, m, order, ok, cand_ok)
        free = free - ok.sum(axis=1)
    order, ok = top(cand_score, cand_ok, np.maximum(free, 0))
    _add_picks(est, n, m, order, ok, cand_ok)


def _add_picks(est: Est, n: IntArray, m: IntArray, order: IntArray, ok: BoolArray, cand_ok: BoolArray) -> None:
    """Add each row's picked products in their order (slots fill in that order)."""
    for j in range(order.shape[1]):
        r = np.flatnonzero(ok[:, j])
        k = order[r, j]
        add(est, n[r], m[r], k)
        cand_ok[r, k] = False


def _swap_in(
    est: Est,
    n: IntArray,
    m: IntArray,
    cand_ok: BoolArray,
    cand_score: FloatArray,
    network_expo: FloatArray,
    days_left: IntArray,
    avail: IntArray,
) -> None:
    cfg, book = est.cfg, est.book
    proven = cand_ok & (network_expo >= cfg.proven_exposure_days)
    order, ok = top(cand_score, proven, np.full(len(n), cfg.max_swaps_per_visit))
    going = np.ones(len(n), dtype=bool)
    for j in range(order.shape[1]):
        going &= ok[:, j]
        if not going.any():
            break
        r = np.flatnonzero(going)
        k = order[r, j]
        judged = _judged(est, n[r], m[r])
        score = _score(est, n[r], m[r])
        has = judged.any(axis=1)
        pk = book.pk[n[r], m[r]]
        worst = first_lowest(np.where(judged, score, np.inf), np.where(judged, pk, np.iinfo(np.int64).max))
        worst_score = score[np.arange(len(r)), worst]
        better = cand_score[r, k] > cfg.swap_ratio * np.maximum(worst_score, 0.0)
        sunk = _sunk(est, n[r], m[r], worst, avail)
        pays = (cand_score[r, k] - worst_score) * days_left[r] > sunk
        yes = has & better & pays
        going[r[~yes]] = False
        rs = r[yes]
        drop(est, n[rs], m[rs], worst[yes])
        add(est, n[rs], m[rs], k[yes])

"""Step 5, continued, for N runs: serving the machines of the day's visits (`autovend.agents.baseline.serve`).

The baseline serves its machines one after the other (the units a machine takes are not there for the next);
here the machines of every run at the same place in their run's order are served together, so the loop runs
over those places (at most M), each step over all the runs. A visit: units that would expire before the next
service come off and are thrown away, the assortment is reviewed, dropped products make room, the shelf is
filled from the warehouse. What the visit leaves on each slot (product, units, units thrown away) becomes the
machine's part of the env action (`Visit`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from autovend.agents.array_baseline.estimate import Est, RowGain
from autovend.agents.array_baseline.review import add, dropped_wide, review, top
from autovend.agents.array_baseline.rows import fit_within
from autovend.agents.array_baseline.targets import carried_order, cycle, levels, targets
from autovend.agents.array_baseline.visits import Calendar
from autovend.arrays.facts import SOON_DAYS
from autovend.arrays.kernel import nonzero

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
NEVER = np.iinfo(np.int64).max


@dataclass(eq=False)
class Visits:
    """The day's moves at the served machines (N, M, S): what each slot is to hold and throw away."""

    served: BoolArray  # (N, M)
    remove: IntArray  # (N, M, S) units taken off each slot before it is filled (stale units, or all of them)
    waste: IntArray  # (N, M, S) units of what comes off each slot to throw away

    @classmethod
    def none(cls, N: int, M: int, S: int) -> Visits:
        """No machine served yet."""
        zeros = np.zeros((N, M, S), dtype=np.int64)
        return cls(np.zeros((N, M), dtype=bool), zeros, zeros.copy())


def returned(
    n: IntArray, k: IntArray, units: IntArray, next_exp: IntArray, d: int, avail: IntArray, wh_next: IntArray
) -> None:
    """`serve.returned`: units off a shelf (none expiring soon) back into the usable warehouse (pairs distinct)."""
    back = units > 0
    n, k, units, next_exp = n[back], k[back], units[back], next_exp[back]
    avail[n, k] += units
    first = np.where(next_exp > d + SOON_DAYS, next_exp, d + SOON_DAYS + 1)
    cur = wh_next[n, k]
    wh_next[n, k] = np.where(cur <= 0, first, np.minimum(cur, first))


def serve(
    est: Est,
    cal: Calendar,
    obs: dict[str, np.ndarray],
    n: IntArray,
    m: IntArray,
    d: int,
    avail: IntArray,
    wh_next: IntArray,
    network_expo: FloatArray,
    visits: Visits,
) -> None:
    """Serve machine m of run n (each run at most once in the call): see the module docstring."""
    book, cfg = est.book, est.cfg
    R, S = len(n), book.pk.shape[2]
    book.cycle[n, m] = cycle(est, n, m)
    nxt = cal.next_service(
        np.full(R, d), np.full(R, d), book.cycle[n, m], book.slot_day[m], cfg.max_cycle_days, cfg.min_gap_days
    )
    long_gap = nxt > d + SOON_DAYS
    expiry = np.full((R, S), NEVER, dtype=np.int64)  # earliest expiry on the shelf after the visit, by slot
    soon = np.zeros((R, S), dtype=np.int64)
    delisted = np.full((R, S), -1, dtype=np.int64)  # products taken off whole at this visit, by slot
    waste = np.zeros((R, S), dtype=np.int64)
    off = np.zeros((R, S), dtype=np.int64)  # units taken off each slot (a product taken off whole: all of them)
    reduced = _take_off_expiring(est, obs, n, m, d, nxt, long_gap, avail, wh_next, expiry, soon, delisted, waste, off)
    gain = RowGain(est, n, m)  # the review's candidates and the clearance are scored alike
    review(est, n, m, d, avail, network_expo, gain)
    book.phase[n, m] &= book.shelf[n, m] > 0
    gone = (book.pk[n, m] >= 0) & ~book.active[n, m] & ~book.phase[n, m]
    book.pk[n, m] = np.where(gone, -1, book.pk[n, m])
    # the carried products and their mean needs until the next service: the same for making room and filling
    # (making room only takes off products no longer carried)
    co = carried_order(est, n, m)
    mean = levels(est, n, m, co[1], np.maximum(nxt - d, 1)[:, None], np.zeros(R, dtype=bool), co[0])
    made_room = _make_room(est, n, m, d, nxt, avail, wh_next, expiry, soon, delisted, waste, off, co, mean)
    restocked = _fill(est, n, m, d, nxt, long_gap, avail, wh_next, expiry, delisted, co, mean, gain)
    touched = restocked | reduced | (delisted >= 0).any(axis=1) | made_room
    book.last_visit[n, m] = np.where(touched, d, book.last_visit[n, m])
    first = (book.first_visit[n, m] == 0) & restocked
    book.first_visit[n, m] = np.where(first, d, book.first_visit[n, m])
    low = expiry.min(axis=1)
    book.must_visit_by[n, m] = np.where(low == NEVER, 0, low)
    visits.served[n, m] = True
    visits.remove[n, m] = off
    visits.waste[n, m] = waste


def _take_off_expiring(
    est: Est,
    obs: dict[str, np.ndarray],
    n: IntArray,
    m: IntArray,
    d: int,
    nxt: IntArray,
    long_gap: BoolArray,
    avail: IntArray,
    wh_next: IntArray,
    expiry: IntArray,
    soon: IntArray,
    delisted: IntArray,
    waste: IntArray,
    off: IntArray,
) -> BoolArray:
    """Units that would expire before the next service come off and are thrown away.

    Before a long gap the whole product comes off and its fresh units go back to the warehouse. Returns where
    units were reduced.
    """
    book = est.book
    units = obs["slot_units"][n, m].astype(np.int64)
    expired = obs["slot_expired"][n, m].astype(np.int64)
    expiring = obs["slot_expiring"][n, m].astype(np.int64)
    next_exp = obs["slot_next_expiry"][n, m].astype(np.int64)
    line = units > 0
    book.shelf[n, m] = np.where(book.pk[n, m] >= 0, units, 0)  # `read_shelf` resets the book to the shelf
    fine = line & (expired == 0) & ~((next_exp > 0) & (next_exp <= nxt[:, None]))
    expiry[...] = np.where(fine & (next_exp > 0), next_exp, expiry)
    soon[...] = np.where(fine & (expiring > 0), expiring, soon)
    stale_line = line & ~fine
    stale = expired + expiring
    cut = stale_line & ~long_gap[:, None]
    qty = np.minimum(units, stale)
    waste[cut] = qty[cut]
    off[cut] = qty[cut]
    book.shelf[n, m] = np.where(cut, units - qty, book.shelf[n, m])
    expiry[...] = np.where(cut & (units - qty > 0), d + SOON_DAYS + 1, expiry)
    off = stale_line & long_gap[:, None]
    if off.any():
        r, s = nonzero(off)
        waste[r, s] = stale[r, s]
        off[r, s] = units[r, s]
        k = book.pk[n[r], m[r], s]
        returned(n[r], k, units[r, s] - stale[r, s], next_exp[r, s], d, avail, wh_next)
        book.shelf[n[r], m[r], s] = 0
        delisted[r, s] = k
    return cut.any(axis=1)


def _make_room(
    est: Est,
    n: IntArray,
    m: IntArray,
    d: int,
    nxt: IntArray,
    avail: IntArray,
    wh_next: IntArray,
    expiry: IntArray,
    soon: IntArray,
    delisted: IntArray,
    waste: IntArray,
    off: IntArray,
    co: tuple[BoolArray, IntArray, IntArray, IntArray],
    mean: tuple[FloatArray, FloatArray, FloatArray],
) -> BoolArray:
    """Dropped products still on the shelf come off when the carried ones' mean needs want their room.

    The best sellers among them stay longest. Their units expiring soon are thrown away, the rest go back.
    """
    book, st = est.book, est.st
    cap = st.capacity[m]
    spare = cap - targets(est, n, m, nxt - d, cap, False, False, co, mean).sum(axis=1)
    old = book.phase[n, m]
    if not old.any():
        return np.zeros(len(n), dtype=bool)
    k = np.maximum(book.pk[n, m], 0)
    mu = est.slot_mu(n, m)
    order = np.lexsort((np.where(old, k, NEVER), np.where(old, -mu, np.inf)), axis=1)
    shelf_sorted = np.take_along_axis(np.where(old, book.shelf[n, m], 0), order, axis=1)
    old_sorted = np.take_along_axis(old, order, axis=1)
    keep_sorted = np.cumsum(shelf_sorted, axis=1) <= spare[:, None]
    out_sorted = old_sorted & ~keep_sorted
    out = np.zeros_like(old)
    np.put_along_axis(out, order, out_sorted, axis=1)
    if not out.any():
        return np.zeros(len(n), dtype=bool)
    r, s = nonzero(out)
    waste[r, s] += soon[r, s]
    off[r, s] += book.shelf[n[r], m[r], s]
    returned(
        n[r],
        k[r, s],
        book.shelf[n[r], m[r], s] - soon[r, s],
        np.where(expiry[r, s] == NEVER, 0, expiry[r, s]),
        d,
        avail,
        wh_next,
    )
    book.shelf[n[r], m[r], s] = 0
    book.phase[n[r], m[r], s] = False
    book.pk[n[r], m[r], s] = -1
    expiry[r, s] = NEVER
    delisted[r, s] = k[r, s]
    return np.asarray(out.any(axis=1))


def _fill(
    est: Est,
    n: IntArray,
    m: IntArray,
    d: int,
    nxt: IntArray,
    long_gap: BoolArray,
    avail: IntArray,
    wh_next: IntArray,
    expiry: IntArray,
    delisted: IntArray,
    co: tuple[BoolArray, IntArray, IntArray, IntArray],
    mean: tuple[FloatArray, FloatArray, FloatArray],
    gain: RowGain,
) -> BoolArray:
    """Restock: the carried products' mean needs, a facing each of uncarried paid-for stock, then the rest.

    The rest is the carried products' share of the room left. Returns where a restock was made.
    """
    book, st = est.book, est.st
    R = len(n)
    cap = st.capacity[m]
    usable = avail[n].copy()  # (R, K)
    if long_gap.any():
        rows = np.flatnonzero(long_gap)
        r, s = nonzero(delisted[rows] >= 0)
        usable[rows[r], delisted[rows[r], s]] = 0
        nexp = wh_next[n[rows]]
        usable[rows] = np.where((nexp > 0) & (nexp <= nxt[rows, None]), 0, usable[rows])
    act, k, pos, _ = co
    held = book.pk[n, m] >= 0
    shelf = np.where(held, book.shelf[n, m], 0)
    free = cap - shelf.sum(axis=1)
    use_k = usable[np.arange(R)[:, None], k]
    base = np.maximum(targets(est, n, m, nxt - d, None, False, False, co, mean) - shelf, 0)
    base = fit_within(np.where(act, np.minimum(base, use_k), 0), act, pos, free)
    room = free - base.sum(axis=1)
    clear, clear_qty = _clearance(est, n, m, usable, room, gain)
    room = room - clear_qty.sum(axis=1)
    other = held & ~act
    keep = np.where(other, shelf, 0).sum(axis=1) + clear_qty.sum(axis=1)
    full = np.maximum(targets(est, n, m, nxt - d, room=cap - keep, carried=co) - shelf - base, 0)
    need = base + fit_within(np.where(act, np.minimum(full, use_k - base), 0), act, pos, np.maximum(room, 0))
    need = np.where(act, need, 0)
    # restocks take the earliest-expiring warehouse units; the ones expiring soon were thrown away
    first = np.where(wh_next[n[:, None], k] > d + SOON_DAYS, wh_next[n[:, None], k], d + SOON_DAYS + 1)
    got = need > 0
    expiry[...] = np.where(got, np.minimum(expiry, first), expiry)
    book.shelf[n, m] += need
    r, s = nonzero(got)
    avail[n[r], k[r, s]] -= need[r, s]
    placed = np.zeros(R, dtype=bool)
    if clear.shape[1]:
        for j in range(clear.shape[1]):  # each row's cleared products into its free slots, in order
            rr = np.flatnonzero(clear_qty[:, j] > 0)
            if not len(rr):
                continue
            kc = clear[rr, j]
            add(est, n[rr], m[rr], kc)
            slot = np.argmax(book.pk[n[rr], m[rr]] == kc[:, None], axis=1)
            book.set_active(n[rr], m[rr], slot, False)
            q = clear_qty[rr, j]
            book.shelf[n[rr], m[rr], slot] = q
            book.phase[n[rr], m[rr], slot] = q > 0
            avail[n[rr], kc] -= q
            wn = wh_next[n[rr], kc]
            fc = np.where(wn > d + SOON_DAYS, wn, d + SOON_DAYS + 1)
            expiry[rr, slot] = np.minimum(expiry[rr, slot], fc)
            placed[rr] = True
    return got.any(axis=1) | placed


def _clearance(
    est: Est, n: IntArray, m: IntArray, usable: IntArray, room: IntArray, gain: RowGain | None = None
) -> tuple[IntArray, IntArray]:
    """Uncarried paid-for stock for each row's machine: a facing each while the room lasts, most promising first."""
    book, st, cfg = est.book, est.st, est.cfg
    R, K = len(n), len(st.sku_ids)
    count = np.where(room >= cfg.facing_units, room // cfg.facing_units, 0)
    if not count.any():
        return np.zeros((R, 0), dtype=np.int64), np.zeros((R, 0), dtype=np.int64)
    carried_any = book.carriers[n] > 0
    here = book.pk[n, m]
    on_here = np.zeros((R, K), dtype=bool)  # phase products, and any unit on this shelf
    r2, s2 = nonzero((here >= 0) & (book.phase[n, m] | (book.shelf[n, m] > 0)))
    on_here[r2, here[r2, s2]] = True
    dropped = dropped_wide(est, n, m)
    dead = (usable > 0) & ~carried_any & ~dropped & ~on_here
    # est.prior * est.margin of the dead stock, row by row (the same products, in the same order)
    order, ok = top((gain or RowGain(est, n, m))(), dead, count)  # top reads the scores of the dead stock only
    # the env's slots bound how many products a machine holds: clearance beyond them is left out (and counted)
    slots_free = (book.pk[n, m] < 0).sum(axis=1)
    over = np.cumsum(ok, axis=1) > slots_free[:, None]
    np.add.at(book.slot_cuts, n, (ok & over).sum(axis=1))
    ok &= ~over
    qty = np.where(ok, np.minimum(np.take_along_axis(usable, order, axis=1), cfg.facing_units), 0)
    return order, qty

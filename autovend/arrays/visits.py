"""The visits of a day on N array runs: machine after machine in visit order, as tool calls would serve them.

At each visited machine, in visit order: every slot gives up the units asked off it (at least those above its
target; all of them when its product changes) to the warehouse, the wasted part of those is thrown away, then
each slot is filled up to its target from the warehouse's earliest-expiring units. A machine's restocks are
first cut to its room (slots in order), then to what the warehouse holds when the machine's turn comes.

What one machine does to a product's warehouse stock only matters to the machines after it. Most products a
day moves are only taken (restocks) or only given back, or given back before they are taken; all their moves
are settled at once (all gifts, then the throw-aways, then the restocks as intervals of one queue). The few
products that a machine gives back after an earlier machine took some are settled move by move, over those
products only (`_in_order`), so that every run is exactly the simulator's under the same tool calls.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.arrays.actions import CODE, Plan
from autovend.arrays.batches import NONE, Int32, drop_front, merge, row_sums, taken_between
from autovend.arrays.facts import ArrayFacts
from autovend.arrays.kernel import nonzero
from autovend.arrays.moves import DayMoves, add_warehouse, group_cumsum, take_warehouse, unbook
from autovend.arrays.state import ArrayState

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
ADD, WASTE, TAKE = 0, 1, 2  # the moves of a product at one machine, in this order


def visit(facts: ArrayFacts, st: ArrayState, plan: Plan, moves: DayMoves) -> None:
    """Carry out the visited machines' moves (see the module docstring)."""
    N, M, S = st.slot_k.shape
    K = facts.n_products
    go = plan.visit[:, :, None]
    cur_k, cur_q = st.slot_k.copy(), st.slot_q.copy()
    change = go & (plan.product != cur_k)
    keep = np.maximum(cur_q - plan.target, plan.remove)
    removed = np.where(go & (cur_q > 0), np.where(change, cur_q, np.minimum(keep, cur_q)), 0)
    # the shelves' side of the removals
    rn, rm, rs = nonzero(removed)
    r = removed[rn, rm, rs]
    rk = cur_k[rn, rm, rs].astype(np.int64)
    rows = (rn * M + rm) * S + rs
    e, q = st.shelf.get(rows)
    parts_e, parts_q = e, taken_between(q, np.zeros_like(r), r)
    if len(rn):
        st.shelf.put(rows, *drop_front(e, q, r))
        st.slot_q[rn, rm, rs] -= r
        np.subtract.at(st.shelf_n, (rn, rm), r)
    moves.removal = (rn, rm, rs, rk, r, r == cur_q[rn, rm, rs])
    st.slot_k[...] = np.where(go, plan.product, cur_k)
    over = plan.waste > removed
    plan.slot_code[over & (plan.slot_code == 0)] = CODE["insufficient_shelf_stock"]
    wasted = np.minimum(plan.waste, removed)
    wn, wm, ws = nonzero(wasted)
    wq = wasted[wn, wm, ws]
    wk = cur_k[wn, wm, ws].astype(np.int64)
    moves.waste = (wn, wm, ws, wk, wq)
    # restock asks, cut to each machine's room in slot order
    ask = np.where(go & (st.slot_k >= 0), np.maximum(plan.target - st.slot_q, 0), 0)
    tn, tm, ts = nonzero(ask)
    a = ask[tn, tm, ts]
    tk = st.slot_k[tn, tm, ts].astype(np.int64)
    free = facts.capacity[tm] - st.shelf_n[tn, tm]
    fit = np.clip(free - (group_cumsum(tn * M + tm, a) - a), 0, a)
    # products a machine gives back after an earlier machine took some: move by move
    rank = plan.rank
    add_row, waste_row, take_row = rn * K + rk, wn * K + wk, tn * K + tk
    late_add = np.full(N * K, -1, dtype=np.int64)
    np.maximum.at(late_add, add_row, rank[rn, rm])
    early_take = np.full(N * K, M, dtype=np.int64)
    np.minimum.at(early_take, waste_row, rank[wn, wm])
    np.minimum.at(early_take, take_row[fit > 0], rank[tn, tm][fit > 0])
    tangled = early_take < late_add
    t_add, t_waste, t_take = tangled[add_row], tangled[waste_row], tangled[take_row]
    got = np.zeros(len(tn), dtype=np.int64)
    take_e = np.full((len(tn), 1), NONE, dtype=np.int32)
    take_q = np.zeros((len(tn), 1), dtype=np.int32)
    if (~t_add).any():
        add_warehouse(facts, st, rn[~t_add], rk[~t_add], parts_e[~t_add], parts_q[~t_add])
    plain = ~t_waste
    if plain.any():
        rows_w, inv = np.unique(waste_row[plain], return_inverse=True)
        total = np.zeros(len(rows_w), dtype=np.int64)
        np.add.at(total, inv, wq[plain])
        take_warehouse(facts, st, rows_w // K, rows_w % K, total)
    plain = ~t_take & (fit > 0)
    if plain.any():
        g, pe, pq = _take_in_turn(facts, st, tn[plain], tk[plain], rank[tn, tm][plain], fit[plain])
        got[plain] = g
        take_e, take_q = _put_rows(take_e, take_q, np.flatnonzero(plain), pe, pq)
    if tangled.any():
        g, pe, pq, which = _in_order(
            facts,
            st,
            (rn[t_add], rk[t_add], rank[rn, rm][t_add], parts_e[t_add], parts_q[t_add]),
            (wn[t_waste], wk[t_waste], rank[wn, wm][t_waste], wq[t_waste]),
            (tn[t_take], tk[t_take], rank[tn, tm][t_take], fit[t_take]),
        )
        idx = np.flatnonzero(t_take)[which]
        got[idx] = g
        take_e, take_q = _put_rows(take_e, take_q, idx, pe, pq)
    code = np.where(fit < a, CODE["capacity_exceeded"], np.where(got < fit, CODE["insufficient_stock"], 0))
    cut = (code > 0) & (plan.slot_code[tn, tm, ts] == 0)
    plan.slot_code[tn[cut], tm[cut], ts[cut]] = code[cut]
    done = got > 0
    moves.restock = (tn[done], tm[done], ts[done], tk[done], got[done])
    if done.any():
        dn, dm, ds, dg = tn[done], tm[done], ts[done], got[done]
        rows = (dn * M + dm) * S + ds
        se, sq = st.shelf.get(rows)
        st.shelf.put(rows, *merge(se, sq, take_e[done], take_q[done]))
        st.slot_q[dn, dm, ds] += dg
        np.add.at(st.shelf_n, (dn, dm), dg)
    moves.rank = rank
    moves.touched = np.asarray((removed > 0).any(axis=2))
    moves.touched[tn[done], tm[done]] = True
    st.last_visit[moves.touched] = st.day


def _put_rows(e: Int32, q: Int32, idx: IntArray, pe: Int32, pq: Int32) -> tuple[Int32, Int32]:
    """Rows `idx` of (e, q) set to (pe, pq), the tables widened to fit."""
    W = max(e.shape[1], pe.shape[1])
    if e.shape[1] < W:
        e = np.concatenate([e, np.full((len(e), W - e.shape[1]), NONE, np.int32)], axis=1)
        q = np.concatenate([q, np.zeros((len(q), W - q.shape[1]), np.int32)], axis=1)
    e[idx] = NONE
    q[idx] = 0
    e[idx, : pe.shape[1]] = pe
    q[idx, : pq.shape[1]] = pq
    return e, q


def _take_in_turn(
    facts: ArrayFacts, st: ArrayState, n: IntArray, k: IntArray, rank: IntArray, want: IntArray
) -> tuple[IntArray, Int32, Int32]:
    """Restocks of products nobody gives back after them: the warehouse shared out in visit order.

    Returns what each got and the batches it took (earliest first, each machine after the earlier ones).
    """
    K = facts.n_products
    row = n * K + k
    order = np.lexsort((rank, row))
    cum = np.empty_like(want)
    cum[order] = group_cumsum(row[order], want[order])
    got = np.clip(st.wh_q[n, k] - (cum - want), 0, want)
    stop = np.empty_like(got)
    stop[order] = group_cumsum(row[order], got[order])
    e, q = st.wh.get(row)
    parts = taken_between(q, stop - got, stop)
    uniq, inv = np.unique(row, return_inverse=True)
    total = np.zeros(len(uniq), dtype=np.int64)
    np.add.at(total, inv, got)
    ue, uq = st.wh.get(uniq)
    st.wh.put(uniq, *drop_front(ue, uq, total))
    st.wh_q[uniq // K, uniq % K] -= total
    return got, e, parts


def _in_order(
    facts: ArrayFacts,
    st: ArrayState,
    adds: tuple[IntArray, IntArray, IntArray, Int32, Int32],
    wastes: tuple[IntArray, IntArray, IntArray, IntArray],
    takes: tuple[IntArray, IntArray, IntArray, IntArray],
) -> tuple[IntArray, Int32, Int32, IntArray]:
    """The moves of the tangled products, settled one after the other in visit order.

    A loop over each product's moves (at most three per machine), over these products only. Returns, for the
    restocks (in the order given), what each got, the batches it took, and their indexes.
    """
    K = facts.n_products
    an, ak, arank, ae, aq = adds
    wn, wk, wrank, wqty = wastes
    tn, tk, trank, tfit = takes
    row = np.concatenate([an * K + ak, wn * K + wk, tn * K + tk])
    rank = np.concatenate([arank, wrank, trank])
    phase = np.concatenate([np.full(len(an), ADD), np.full(len(wn), WASTE), np.full(len(tn), TAKE)])
    src = np.concatenate([np.arange(len(an)), np.arange(len(wn)), np.arange(len(tn))])
    order = np.lexsort((phase, rank, row))
    row, phase, src = row[order], phase[order], src[order]
    rows, local = np.unique(row, return_inverse=True)
    first = np.r_[True, row[1:] != row[:-1]]
    i = np.arange(len(row))
    step = i - np.maximum.accumulate(np.where(first, i, 0))
    be, bq = st.wh.get(rows)
    got = np.zeros(len(tn), dtype=np.int64)
    out_e = np.full((len(tn), 1), NONE, dtype=np.int32)
    out_q = np.zeros((len(tn), 1), dtype=np.int32)
    for j in range(int(step.max()) + 1):
        at = step == j
        for kind in (ADD, WASTE, TAKE):
            sel = at & (phase == kind)
            if not sel.any():
                continue
            lr, sx = local[sel], src[sel]
            e, q = be[lr], bq[lr]
            if kind == ADD:
                ne, nq = merge(e, q, ae[sx], aq[sx])
            else:
                amount = wqty[sx] if kind == WASTE else np.minimum(tfit[sx], row_sums(q))
                taken = taken_between(q, np.zeros_like(amount), amount)
                ne, nq = drop_front(e, q, amount)
                nn, kk = rows[lr] // K, rows[lr] % K
                if kind == WASTE:
                    unbook(facts, st, nn, kk, e, taken)
                else:
                    got[sx] = amount
                    out_e, out_q = _put_rows(out_e, out_q, sx, e, taken)
            be, bq = _put_rows(be, bq, lr, ne, nq)
    st.wh.put(rows, be, bq)
    st.wh_q[rows // K, rows % K] = row_sums(bq)
    return got, out_e, out_q, np.arange(len(tn))

"""The visits of a day, compiled: run by run, machine after machine in visit order, slot after slot.

At a visited machine: each slot gives up the units asked off it (earliest-expiring first) to the warehouse and
takes its new product; the units to throw away then leave the warehouse (earliest-expiring first, their cost off
the book); then each slot is filled up to its target from the warehouse's earliest-expiring units, the asks cut
first to the machine's room in slot order, then to what the warehouse holds when its turn comes. These are the
simulator's tool calls in the order `autovend.arrays.visits` describes; batches are rows of `BatchTable`s
(sorted by expiry, equal days merged, packed left), and a table widens, to the batches a row needs, when a row
needs more than it has.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.arrays.batches import merge_row, take_row
from autovend.calibration.kernels import compiled

IntArray = npt.NDArray[np.int64]
Int32 = npt.NDArray[np.int32]
Int8 = npt.NDArray[np.int8]
BoolArray = npt.NDArray[np.bool_]


@compiled(nogil=True, boundscheck=False)
def visit_runs(
    go: BoolArray, rank: IntArray, product: Int32, target: IntArray, remove: IntArray, waste: IntArray,
    slot_code: Int8, slot_k: Int32, slot_q: IntArray, shelf_n: IntArray, last_visit: IntArray, day: int,
    capacity: IntArray, sh_e: Int32, sh_q: Int32, sh_used: Int32, wh_e: Int32, wh_q: Int32, wh_used: Int32,
    wh_units: IntArray, book: IntArray, cost: IntArray, codes: Int8,
) -> tuple[Int32, Int32, Int32, Int32, IntArray, IntArray, IntArray, BoolArray]:  # pragma: no cover  # fmt: skip
    """Every run's visits (module docstring), in place.

    codes: the slot codes (insufficient_shelf_stock, capacity_exceeded, insufficient_stock). Returns the shelf
    and warehouse tables (widened if need be), the moves as rows (n, m, s, product, units, whole) of the units
    taken off, thrown away and restocked, by run, machine and slot (`whole`: every unit of the slot, for the
    first), and the machines touched (N, M).
    """
    N, M, S = slot_k.shape
    K = wh_units.shape[1]
    visits = 0
    for n in range(N):
        for m in range(M):
            if go[n, m]:
                visits += 1
    moves = np.empty((3, visits * S, 6), dtype=np.int64)  # removal, waste, restock rows (as filled)
    count = np.zeros(3, dtype=np.int64)
    touched = np.zeros((N, M), dtype=np.bool_)
    pe = np.empty(sh_e.shape[1] + wh_e.shape[1], dtype=np.int32)  # a move's batches (grows with the tables)
    pq = np.empty(sh_e.shape[1] + wh_e.shape[1], dtype=np.int32)
    order = np.empty(M, dtype=np.int64)
    # the run's slots: product before, units off, wasted, restocked, whole
    was = np.empty((M, S), dtype=np.int64)
    off = np.zeros((M, S), dtype=np.int64)
    thrown = np.zeros((M, S), dtype=np.int64)
    put = np.zeros((M, S), dtype=np.int64)
    whole = np.zeros((M, S), dtype=np.int64)
    for n in range(N):
        for m in range(M):
            order[rank[n, m]] = m
        for i in range(M):
            m = order[i]
            if not go[n, m]:
                continue
            # units off the shelves, back to the warehouse; the slots take their new products
            for s in range(S):
                ck, cq = slot_k[n, m, s], slot_q[n, m, s]
                was[m, s] = ck
                r = 0
                if cq > 0:
                    r = cq if product[n, m, s] != ck else min(max(cq - target[n, m, s], remove[n, m, s]), cq)
                if r > 0:
                    parts, _ = take_row(sh_e, sh_q, sh_used, (n * M + m) * S + s, r, pe, pq)
                    slot_q[n, m, s] -= r
                    shelf_n[n, m] -= r
                    wh_e, wh_q = merge_row(wh_e, wh_q, wh_used, n * K + ck, pe, pq, parts)
                    wh_units[n, ck] += r
                off[m, s] = r
                whole[m, s] = r == cq
                if waste[n, m, s] > r and slot_code[n, m, s] == 0:
                    slot_code[n, m, s] = codes[0]
                thrown[m, s] = min(waste[n, m, s], r)
                slot_k[n, m, s] = product[n, m, s]
            if len(pe) < sh_e.shape[1] + wh_e.shape[1]:  # the warehouse table widened
                pe = np.empty(sh_e.shape[1] + wh_e.shape[1], dtype=np.int32)
                pq = np.empty(sh_e.shape[1] + wh_e.shape[1], dtype=np.int32)
            # what is thrown away leaves the warehouse (and the book)
            for s in range(S):
                w = thrown[m, s]
                if w > 0:
                    k = was[m, s]
                    parts, taken = take_row(wh_e, wh_q, wh_used, n * K + k, w, pe, pq)
                    for j in range(parts):
                        book[n, pe[j]] -= pq[j] * cost[k]
                    wh_units[n, k] -= taken
            # restocks: asks cut to the machine's room in slot order, then to the warehouse's units
            free = capacity[m] - shelf_n[n, m]
            before = 0
            for s in range(S):
                put[m, s] = 0
                k = slot_k[n, m, s]
                a = max(target[n, m, s] - slot_q[n, m, s], 0) if k >= 0 else 0
                if a <= 0:
                    continue
                fit = min(max(free - before, 0), a)
                before += a
                g = min(fit, wh_units[n, k])
                if g > 0:
                    parts, _ = take_row(wh_e, wh_q, wh_used, n * K + k, g, pe, pq)
                    sh_e, sh_q = merge_row(sh_e, sh_q, sh_used, (n * M + m) * S + s, pe, pq, parts)
                    slot_q[n, m, s] += g
                    shelf_n[n, m] += g
                    wh_units[n, k] -= g
                    put[m, s] = g
                code = codes[1] if fit < a else (codes[2] if g < fit else 0)
                if code != 0 and slot_code[n, m, s] == 0:
                    slot_code[n, m, s] = code
            if len(pe) < sh_e.shape[1] + wh_e.shape[1]:  # the shelf table widened
                pe = np.empty(sh_e.shape[1] + wh_e.shape[1], dtype=np.int32)
                pq = np.empty(sh_e.shape[1] + wh_e.shape[1], dtype=np.int32)
        # the run's moves, by machine and slot
        for m in range(M):
            if not go[n, m]:
                continue
            for s in range(S):
                for kind in range(3):
                    units = off[m, s] if kind == 0 else (thrown[m, s] if kind == 1 else put[m, s])
                    if units > 0:
                        row = moves[kind, count[kind]]
                        row[0], row[1], row[2] = n, m, s
                        row[3] = slot_k[n, m, s] if kind == 2 else was[m, s]
                        row[4], row[5] = units, whole[m, s]
                        count[kind] += 1
                        touched[n, m] |= kind != 1
            if touched[n, m]:
                last_visit[n, m] = day
    return sh_e, sh_q, wh_e, wh_q, moves[0, : count[0]], moves[1, : count[1]], moves[2, : count[2]], touched

"""A day's moves on N array runs at once, in the order one day's tool calls would make them.

1. `discard`: warehouse units thrown away (per product, earliest-expiring first);
2. the visits (`autovend.arrays.visits`), machine after machine in visit order;
3. `set_prices`, 4. `place_orders`.

These are the simulator's restock, reduce, delist, discard, adjust_price and place_order items (`DayMoves`
lists them, in this order, for `autovend.arrays.log`), under the simulator's rules: physical moves on working
days only, each touched machine pays one visit, stock and capacity are never exceeded, orders land after the
lead time of their own order id.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from autovend.arrays.actions import CODE, Plan
from autovend.arrays.batches import Int32, drop_front, merge, row_sums, taken_between
from autovend.arrays.facts import ArrayFacts
from autovend.arrays.kernel import as_int64, nonzero
from autovend.arrays.state import ArrayState, lead_uniforms
from autovend.calibration.kernels import compiled
from autovend.sim.inventory import LEAD_BLOCK

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(eq=False)
class DayMoves:
    """The items of a day's moves, one entry per item; `n` is the run of each (see `autovend.arrays.log`)."""

    discard: tuple[IntArray, IntArray, IntArray] = ()  # type: ignore[assignment]  # n, k, qty
    removal: tuple[IntArray, IntArray, IntArray, IntArray, IntArray, BoolArray] = ()  # type: ignore[assignment]
    # n, m, s, k, qty, whole (delist)
    waste: tuple[IntArray, IntArray, IntArray, IntArray, IntArray] = ()  # type: ignore[assignment]  # n, m, s, k, qty
    restock: tuple[IntArray, IntArray, IntArray, IntArray, IntArray] = ()  # type: ignore[assignment]  # n, m, s, k, qty
    price: tuple[IntArray, IntArray, IntArray, IntArray] = ()  # type: ignore[assignment]  # n, m, k, fen
    order: tuple[IntArray, IntArray, IntArray] = ()  # type: ignore[assignment]  # n, k, qty
    rank: IntArray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))  # (N, M) visit order
    touched: BoolArray = field(default_factory=lambda: np.zeros((0, 0), dtype=bool))  # (N, M)


def at_run_start(base: IntArray, first: BoolArray) -> IntArray:
    """Each entry's value of `base` at the start of its run."""
    idx = np.maximum.accumulate(np.where(first, np.arange(len(first)), 0))
    return base[idx]


def unbook(facts: ArrayFacts, st: ArrayState, n: IntArray, k: IntArray, expiry: Int32, taken: Int32) -> None:
    """Units leaving the stock (sold or thrown away): their cost comes off the book at their expiry days."""
    sel = taken > 0
    if not sel.any():
        return
    rows = np.broadcast_to(n[:, None], taken.shape)[sel]
    cost = (taken * facts.cost_fen[k][:, None])[sel]
    np.subtract.at(st.book, (rows, expiry[sel].astype(np.int64)), cost)


def take_warehouse(facts: ArrayFacts, st: ArrayState, n: IntArray, k: IntArray, qty: IntArray) -> Int32:
    """Take `qty` units (at most what is there) of product k from run n's warehouse, earliest first.

    The units leave the stock (and the book); (n, k) pairs distinct. Returns the units taken from each batch.
    """
    K = facts.n_products
    rows = n * K + k
    e, q = st.wh.get(rows)
    taken = taken_between(q, np.zeros_like(qty), qty)
    unbook(facts, st, n, k, e, taken)
    st.wh.put(rows, *drop_front(e, q, qty))
    st.wh_q[n, k] -= qty
    return taken


def add_warehouse(facts: ArrayFacts, st: ArrayState, n: IntArray, k: IntArray, expiry: Int32, qty: Int32) -> None:
    """Put batches (one row of them per entry; (n, k) may repeat) into the warehouse (their cost stays booked)."""
    K = facts.n_products
    rows = n * K + k
    uniq, inv = np.unique(rows, return_inverse=True)
    order = np.argsort(inv, kind="stable")
    first = np.r_[True, inv[order][1:] != inv[order][:-1]]
    rank = np.empty(len(rows), dtype=np.int64)
    rank[order] = np.arange(len(rows)) - at_run_start(np.arange(len(rows)), first)
    B = expiry.shape[1]
    width = (int(rank.max()) + 1) * B
    add_e = np.zeros((len(uniq), width), dtype=np.int32)
    add_q = np.zeros((len(uniq), width), dtype=np.int32)
    cols = rank[:, None] * B + np.arange(B)[None, :]
    add_e[inv[:, None], cols] = expiry
    add_q[inv[:, None], cols] = qty
    e, q = st.wh.get(uniq)
    st.wh.put(uniq, *merge(e, q, add_e, add_q))
    np.add.at(st.wh_q, (n, k), row_sums(qty))


def discard(facts: ArrayFacts, st: ArrayState, plan: Plan, moves: DayMoves) -> None:
    """Throw away the warehouse units the plan asks for (cut to what the warehouse holds)."""
    want = plan.discard
    short = want > st.wh_q
    plan.discard_code[short & (plan.discard_code == 0)] = CODE["insufficient_stock"]
    qty = np.minimum(want, st.wh_q)
    n, k = nonzero(qty)
    q = qty[n, k]
    if len(n):
        take_warehouse(facts, st, n, k, q)
    moves.discard = (n, k, q)


def set_prices(facts: ArrayFacts, st: ArrayState, plan: Plan, moves: DayMoves) -> None:
    """Put the asked prices on the slots' products where they differ from the prices in force."""
    moves.price = _set_prices(st.slot_k, as_int64(plan.price), st.price)


@compiled(nogil=True, boundscheck=False)
def _set_prices(
    slot_k: Int32, ask: IntArray, price: Int32
) -> tuple[IntArray, IntArray, IntArray, IntArray]:  # pragma: no cover - compiled
    """price[n, m, k] = ask[n, m, s] for each slot holding k with an asked price (>= 0) other than the one in force.

    Slot by slot; returns the changes (n, m, k, fen) in slot order.
    """
    N, M, S = slot_k.shape
    change = np.zeros((N, M, S), dtype=np.bool_)  # decided against the prices before any is put (as numpy's gather)
    C = 0
    for n in range(N):
        for m in range(M):
            for s in range(S):
                k = slot_k[n, m, s]
                if k >= 0 and ask[n, m, s] >= 0 and ask[n, m, s] != price[n, m, k]:
                    change[n, m, s] = True
                    C += 1
    out = np.empty((4, C), dtype=np.int64)
    c = 0
    for n in range(N):
        for m in range(M):
            for s in range(S):
                if change[n, m, s]:
                    k = slot_k[n, m, s]
                    out[0, c], out[1, c], out[2, c], out[3, c] = n, m, k, ask[n, m, s]
                    price[n, m, k] = ask[n, m, s]
                    c += 1
    return out[0], out[1], out[2], out[3]


def place_orders(facts: ArrayFacts, st: ArrayState, plan: Plan, moves: DayMoves) -> None:
    """Order the asked units (product order within a run: order ids count up in that order); cash pays at once."""
    n, k = nonzero(plan.order)
    q = plan.order[n, k]
    moves.order = (n, k, q)
    if not len(n):
        return
    first = np.r_[True, n[1:] != n[:-1]]
    ids = st.next_order[n] + np.arange(len(n)) - at_run_start(np.arange(len(n)), first)
    need = int(ids.max())
    if need > st.lead_u.shape[1]:
        st.lead_u = lead_uniforms(st.seeds, -(-need // LEAD_BLOCK), st.lead_u)
    u = st.lead_u[n, ids - 1]
    i = np.minimum(np.searchsorted(facts.lead_cdf, u, side="right"), len(facts.leads) - 1)
    arrival = st.day + facts.leads[i]
    R = st.arriving.shape[0]
    st.arriving[arrival % R, n, k] += q
    st.transit[n, k] += q
    np.subtract.at(st.cash, n, q * facts.cost_fen[k])
    st.next_order += np.bincount(n, minlength=len(st.cash))

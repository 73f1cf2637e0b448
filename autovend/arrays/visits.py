"""The visits of a day on N array runs: machine after machine in visit order, as tool calls would serve them.

At each visited machine, in visit order: every slot gives up the units asked off it (at least those above its
target; all of them when its product changes) to the warehouse, the wasted part of those is thrown away, then
each slot is filled up to its target from the warehouse's earliest-expiring units. A machine's restocks are
first cut to its room (slots in order), then to what the warehouse holds when the machine's turn comes.

What one machine does to a product's warehouse stock matters to the machines after it, so the moves are made
one after the other, run by run, in compiled code (`autovend.arrays.visit_kernel`): every run is exactly the
simulator's under the same tool calls (`tests/arrays/test_core.py` plays them side by side).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.arrays.actions import CODE, Plan
from autovend.arrays.facts import ArrayFacts
from autovend.arrays.kernel import as_int32, as_int64
from autovend.arrays.moves import DayMoves
from autovend.arrays.state import ArrayState
from autovend.arrays.visit_kernel import visit_runs

IntArray = npt.NDArray[np.int64]


def visit(facts: ArrayFacts, st: ArrayState, plan: Plan, moves: DayMoves) -> None:
    """Carry out the visited machines' moves (see the module docstring): compiled, run by run (`visit_kernel`)."""
    codes = np.array([CODE[c] for c in ("insufficient_shelf_stock", "capacity_exceeded", "insufficient_stock")])
    sh, wh = st.shelf, st.wh
    sh.expiry, sh.qty, wh.expiry, wh.qty, removal, waste, restock, touched = visit_runs(
        plan.visit, as_int64(plan.rank), as_int32(plan.product), as_int64(plan.target), as_int64(plan.remove),
        as_int64(plan.waste), plan.slot_code, st.slot_k, st.slot_q, st.shelf_n, st.last_visit, st.day,
        as_int64(facts.capacity), sh.expiry, sh.qty, sh.used, wh.expiry, wh.qty, wh.used, st.wh_q, st.book,
        as_int64(facts.cost_fen), codes.astype(np.int8),
    )  # fmt: skip
    rn, rm, rs, rk, rq = _columns(removal)
    moves.removal = (rn, rm, rs, rk, rq, removal[:, 5] == 1)
    moves.waste = _columns(waste)
    moves.restock = _columns(restock)
    moves.rank = plan.rank
    moves.touched = touched


def _columns(rows: IntArray) -> tuple[IntArray, IntArray, IntArray, IntArray, IntArray]:
    """(n, m, s, product, units) of a (moves, 6) table, each as a contiguous array."""
    n, m, s, k, q = (np.ascontiguousarray(rows[:, j]) for j in range(5))
    return n, m, s, k, q

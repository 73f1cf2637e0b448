"""The state of N array runs stepped together (`ArrayState`) and its start (`initial_state`).

Every run is in the same day (they step in lockstep); what differs between runs has a leading run axis N.
Machines hold their products in S slots (`slot_k`, -1 = empty; a product is in at most one slot of a machine)
with dated batches per slot; the warehouse holds dated batches per product. Money is integer fen. `book`
holds the cost of every unit on shelves or in the warehouse by its expiry day, so the value at cost of the
unexpired stock on day d is the sum of the book after d (`stock_value`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from autovend.arrays.batches import BatchTable
from autovend.arrays.facts import ArrayFacts
from autovend.rng import stream
from autovend.sim.inventory import LEAD_BLOCK

IntArray = npt.NDArray[np.int64]
Int32 = npt.NDArray[np.int32]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

SHELF_BATCHES = 4  # initial batches per slot (tables widen when a place needs more)
WAREHOUSE_BATCHES = 4


@dataclass(eq=False)
class ArrayState:
    """N runs of one world in one day (see the module docstring)."""

    seeds: IntArray  # (N,)
    day: int
    done: bool
    cash: IntArray  # (N,) fen
    slot_k: Int32  # (N, M, S) product of each slot, -1 = empty
    slot_q: IntArray  # (N, M, S) units in each slot, expired included
    shelf: BatchTable  # rows (N * M * S): the slots' batches
    shelf_n: IntArray  # (N, M) units on each machine
    wh: BatchTable  # rows (N * K): the warehouse's batches
    wh_q: IntArray  # (N, K) units in the warehouse, expired included
    transit: IntArray  # (N, K) units ordered and not yet arrived
    arriving: IntArray  # (R, N, K) units landing on day t at index t % R
    next_order: IntArray  # (N,) the next order id of each run
    lead_u: FloatArray  # (N, blocks * LEAD_BLOCK) uniforms of the order lead times, by order id - 1
    xi: FloatArray  # (N, M, horizon) demand shocks
    price: Int32  # (N, M, K) prices in force, fen
    last_visit: IntArray  # (N, M) last day with a visit, 0 = never
    book: IntArray  # (N, D) cost of the units held, by expiry day
    sold: IntArray  # (N, M, S) units each slot sold on the last settled day
    revenue: IntArray  # (N, M, S) its revenue, fen
    cogs: IntArray  # (N, M, S) its cost of goods sold (unexpired units), fen
    close: IntArray  # (N,) net assets at the close of the last settled day (start cash before day 1)
    close_cash: IntArray  # (N,) cash at that close

    @property
    def n_runs(self) -> int:
        """N."""
        return len(self.seeds)

    def stock_value(self) -> IntArray:
        """(N,) cost of the unexpired units on shelves and in the warehouse today (fen)."""
        return self.book[:, self.day + 1 :].sum(axis=1)

    def net_assets(self, cost_fen: IntArray) -> IntArray:
        """(N,) cash + unexpired stock at cost + in transit at cost (fen): eq. (1)."""
        return self.cash + self.stock_value() + self.transit @ cost_fen


def lead_uniforms(seeds: IntArray, blocks: int, have: FloatArray | None = None) -> FloatArray:
    """The first `blocks` blocks of each run's lead-time uniforms (stream ("lead_time", block)), kept ones reused."""
    start = 0 if have is None else have.shape[1] // LEAD_BLOCK
    parts = [] if have is None else [have]
    for b in range(start, blocks):  # a block is 4096 orders: a run crosses into a new one a few times at most
        parts.append(np.stack([stream(int(s), "lead_time", b).random(LEAD_BLOCK) for s in seeds.tolist()]))
    return np.concatenate(parts, axis=1)


def initial_state(facts: ArrayFacts, seeds: IntArray, slots: int) -> ArrayState:
    """N runs before day 1 starts: start cash, empty stock, reference prices, each run's demand shocks."""
    N, M, K = len(seeds), facts.n_machines, facts.n_products
    dm = facts.facts.demand
    ring = int(facts.leads.max()) + 1
    return ArrayState(
        seeds=seeds.astype(np.int64),
        day=1,
        done=False,
        cash=np.full(N, facts.start_cash_fen, dtype=np.int64),
        slot_k=np.full((N, M, slots), -1, dtype=np.int32),
        slot_q=np.zeros((N, M, slots), dtype=np.int64),
        shelf=BatchTable(N * M * slots, SHELF_BATCHES),
        shelf_n=np.zeros((N, M), dtype=np.int64),
        wh=BatchTable(N * K, WAREHOUSE_BATCHES),
        wh_q=np.zeros((N, K), dtype=np.int64),
        transit=np.zeros((N, K), dtype=np.int64),
        arriving=np.zeros((ring, N, K), dtype=np.int64),
        next_order=np.ones(N, dtype=np.int64),
        lead_u=lead_uniforms(seeds, 1),
        xi=np.stack([dm.shock_path(int(s), facts.horizon) for s in seeds.tolist()]),
        price=np.broadcast_to(facts.ref_fen.astype(np.int32), (N, M, K)).copy(),
        last_visit=np.zeros((N, M), dtype=np.int64),
        book=np.zeros((N, facts.n_days), dtype=np.int64),
        sold=np.zeros((N, M, slots), dtype=np.int64),
        revenue=np.zeros((N, M, slots), dtype=np.int64),
        cogs=np.zeros((N, M, slots), dtype=np.int64),
        close=np.full(N, facts.start_cash_fen, dtype=np.int64),
        close_cash=np.full(N, facts.start_cash_fen, dtype=np.int64),
    )

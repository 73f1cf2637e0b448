"""The state of a run (`SimState`: everything that changes during a run), its start, and a `Snapshot`.

The simulator's parts (actions, settlement, accounting, queries) all work on one `SimState`; a
`Snapshot` is that state together with the two record stores, which is what a checkpoint saves.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from autovend.errors import EpisodeOver
from autovend.sim import inventory as inv
from autovend.sim.facts import IntArray, WorldFacts
from autovend.sim.hidden import HiddenLog
from autovend.sim.results import DayReport, DayStart

LedgerRow = tuple[int, str, str, int, str]  # day, account, kind, amount_fen, ref


@dataclass
class SimState:
    """Everything that changes during a run (pickled whole by checkpoints)."""

    seed: int
    day: int
    done: bool
    cash_fen: int
    xi: npt.NDArray[np.float64]  # (M, horizon) demand shocks
    shelf_q: IntArray  # (M, K) units on shelves, expired included
    shelf_n: IntArray  # (M,) units on each machine's shelves (row sums of shelf_q)
    wh_q: IntArray  # (K,) units in the warehouse, expired included
    transit_q: IntArray  # (K,) units ordered and not yet arrived
    price_fen: IntArray  # (M, K) prices in force
    shelves: dict[tuple[int, int], inv.Batches]
    warehouse: dict[int, inv.Batches]
    shelf_book: inv.ExpiryBook  # shelf units and cost by expiry day (all machines)
    wh_book: inv.ExpiryBook  # warehouse units and cost by expiry day
    orders: dict[int, inv.Order]
    pending: dict[int, list[int]]  # arrival day -> ids of orders landing then
    next_order_id: int
    touched: dict[int, int]  # machine -> accepted physical operations today
    last_visit: IntArray  # (M,) last day with a visit, 0 = never
    ordered: IntArray  # (K,) units ever ordered
    sold: IntArray  # (K,) units ever sold
    discarded: IntArray  # (K,) units ever discarded
    ledger: list[LedgerRow]
    day_costs: dict[str, int]  # today's cash costs by kind
    day_expiry_fen: int
    day_discard_fen: int
    day_start: DayStart | None = None
    reports: list[DayReport] = field(default_factory=list)

    def check_open(self, horizon_days: int) -> None:
        """Raise EpisodeOver once the last day has been ended."""
        if self.done:
            raise EpisodeOver(f"the episode ended after day {horizon_days}; start a new run with reset(seed=...)")


def initial_state(facts: WorldFacts, seed: int) -> SimState:
    """The state before day 1 starts: start cash, empty stock, reference prices, the run's demand shocks."""
    world = facts.world
    M, K = facts.n_machines, facts.n_products
    return SimState(
        seed=seed,
        day=1,
        done=False,
        cash_fen=facts.start_cash_fen,
        xi=world.demand_model.shock_path(seed, facts.horizon_days),
        shelf_q=np.zeros((M, K), dtype=np.int64),
        shelf_n=np.zeros(M, dtype=np.int64),
        wh_q=np.zeros(K, dtype=np.int64),
        transit_q=np.zeros(K, dtype=np.int64),
        price_fen=np.tile(facts.ref_fen, (M, 1)),
        shelves={},
        warehouse={},
        shelf_book=inv.ExpiryBook(),
        wh_book=inv.ExpiryBook(),
        orders={},
        pending={},
        next_order_id=1,
        touched={},
        last_visit=np.zeros(M, dtype=np.int64),
        ordered=np.zeros(K, dtype=np.int64),
        sold=np.zeros(K, dtype=np.int64),
        discarded=np.zeros(K, dtype=np.int64),
        ledger=[],
        day_costs=dict.fromkeys(facts.cost_kinds, 0),
        day_expiry_fen=0,
        day_discard_fen=0,
    )


@dataclass(frozen=True, eq=False)
class Snapshot:
    """A whole run: its state, the agent-visible database as `serialize()` bytes, and the hidden log.

    `state` and `hidden` are the simulator's own objects, not copies (taking a snapshot is cheap):
    write the snapshot out (see `autovend.sim.checkpoint`) or copy it before the run moves on. A
    simulator restored from a snapshot takes its state and hidden log over.
    """

    state: SimState
    records: bytes
    hidden: HiddenLog

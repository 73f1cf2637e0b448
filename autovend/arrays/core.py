"""`ArraySim`: N runs of one world stepped together, a day per step, with array actions and observations.

    sim = ArraySim("cn20", n_runs=1024, slots=64)
    obs = sim.reset(seeds=range(1, 1025))                # dict of arrays, leading axis N
    obs, reward, info = sim.step(action)                  # action: dict of arrays (autovend.arrays.actions)

A step is a day of the simulator: the action is carried out as the simulator's own actions (`moves`), the
day is closed exactly as `Simulator.end_day` closes it (`settle`), the next day starts. The reward is the
change in net assets over the day (in hundredths of the world's currency, as integers: "fen" in names here, as in
`autovend.sim.money`; `autovend.arrays.env` gives whole units). Runs never share anything but the world: run n
with seed s is the simulator's run with seed s under the same actions, to the hundredth (`tests/arrays/test_core.py`
plays the same days through `Simulator` and compares every day).
With `record`, the tool calls each recorded run stands for are kept (`calls`), to be replayed into a run
folder (`autovend.agents.array_replay`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from autovend.arrays import moves as mv
from autovend.arrays.actions import Plan, read_action
from autovend.arrays.batches import BatchTable, table_expiry
from autovend.arrays.facts import SOON_DAYS, ArrayFacts
from autovend.arrays.log import Call, CallLog
from autovend.arrays.settle import DayClose, end_day, start_day
from autovend.arrays.state import ArrayState, initial_state
from autovend.arrays.visits import visit
from autovend.calibration.kernels import compiled
from autovend.rng import run_seed
from autovend.world.bundle import as_world
from autovend.world.model import World

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
Int32 = npt.NDArray[np.int32]
Obs = dict[str, np.ndarray]

DEFAULT_SLOTS = 64  # products a machine can hold at once (carried or still on the shelf)


def _count(value: object, what: str) -> int:
    """`value` as a whole number >= 1 (a numpy integer as its int; a boolean is none), or a ValueError naming it."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{what} must be a whole number >= 1, got {value!r}; pass an integer such as 8")
    return int(value)


class ArraySim:
    """N runs of one world in lockstep (see the module docstring)."""

    def __init__(
        self,
        world: World | str | os.PathLike[str],
        n_runs: int,
        *,
        slots: int = DEFAULT_SLOTS,
        record: bool | Iterable[int] = False,
    ) -> None:
        n_runs, slots = _count(n_runs, "n_runs"), _count(slots, "slots")
        self.facts = ArrayFacts.of(world if isinstance(world, World) else as_world(world))
        self.n_runs = n_runs
        self.slots = slots
        runs = tuple(range(n_runs)) if record is True else () if record is False else tuple(int(i) for i in record)
        bad = [i for i in runs if not 0 <= i < n_runs]
        if bad:
            raise ValueError(f"record names runs {bad} outside 0..{n_runs - 1}")
        self._record = runs
        self.calls = CallLog(runs)
        self.state: ArrayState | None = None
        self.last_plan: Plan | None = None
        self.last_close: DayClose | None = None

    # ------------------------------------------------------------------ life cycle

    def reset(self, seeds: Sequence[int] | IntArray) -> Obs:
        """Start every run at day 1 (run n with seeds[n]) and return day 1's observation."""
        if isinstance(seeds, np.ndarray) and seeds.ndim != 1:
            raise ValueError(f"reset needs {self.n_runs} seeds (a list or a 1-d array), got a {seeds.ndim}-d array")
        if isinstance(seeds, (str, bytes)) or not isinstance(seeds, (Sequence, np.ndarray)):
            got = f"{seeds!r:.40} (of type {type(seeds).__name__})"
            raise ValueError(f"reset needs {self.n_runs} seeds (a list or a 1-d array), got {got}")
        if len(seeds) != self.n_runs:
            raise ValueError(f"reset needs {self.n_runs} seeds, got {len(seeds)}")
        # each a whole number >= 0 (`autovend.rng.run_seed`: a boolean, a float or text is refused, as at every door)
        s = np.array([run_seed(one, f"seeds[{i}]") for i, one in enumerate(seeds)], dtype=np.int64)
        self.state = initial_state(self.facts, s, self.slots)
        start_day(self.facts, self.state, 1)
        self.calls = CallLog(self._record)
        self.last_plan = None
        self.last_close = None
        return self.observation()

    def step(self, action: Mapping[str, Any]) -> tuple[Obs, IntArray, DayClose]:
        """Carry out one day's action in every run, close the day, start the next (module docstring).

        Returns the new day's observation, the day's change of net assets per run (fen) and the close.
        """
        st = self._open()
        facts = self.facts
        plan = read_action(facts, st, action)
        moves = mv.DayMoves()
        mv.discard(facts, st, plan, moves)
        visit(facts, st, plan, moves)
        mv.set_prices(facts, st, plan, moves)
        mv.place_orders(facts, st, plan, moves)
        if self._record:
            self.calls.add(facts, moves)
        close = end_day(facts, st, moves.touched)
        if st.day >= facts.horizon:
            st.done = True
        else:
            start_day(facts, st, st.day + 1)
        self.last_plan, self.last_close = plan, close
        return self.observation(), close.net, close

    def _open(self) -> ArrayState:
        if self.state is None:
            raise RuntimeError("call reset(seeds) before step()")
        if self.state.done:
            raise RuntimeError(f"the runs ended after day {self.facts.horizon}; call reset(seeds) to start new ones")
        return self.state

    # ------------------------------------------------------------------ reading

    @property
    def day(self) -> int:
        """The current day (the last day once the runs are over)."""
        return 0 if self.state is None else self.state.day

    @property
    def done(self) -> bool:
        """True once the last day of the horizon is settled."""
        return self.state is not None and self.state.done

    def net_assets_fen(self) -> IntArray:
        """(N,) net assets now (fen): cash, unexpired stock and orders in transit at cost.

        After a step this is the start of the next day (its rent and fee paid); `state.close` holds the close
        of the day settled, which is what the simulator's day report and a run folder show.
        """
        st = self._state()
        return st.net_assets(self.facts.cost_fen)

    def _state(self) -> ArrayState:
        if self.state is None:
            raise RuntimeError("call reset(seeds) first")
        return self.state

    def run_calls(self, run: int) -> list[list[Call]]:
        """The recorded tool calls of run `run`, day by day (each day's before its end_day)."""
        if run not in self._record:
            raise ValueError(f"run {run} is not recorded; pass record=True or record=[{run}, ...]")
        return self.calls.days[self._record.index(run)]

    def observation(self) -> Obs:
        """The current day's observation of every run (see `autovend.arrays.env` for the keys)."""
        st = self._state()
        f = self.facts
        N = st.n_runs
        d = st.day
        expired, expiring, nxt = self._slot_expiry()
        price = np.empty(st.slot_k.shape)
        slot_prices(st.slot_k, st.price, f.ref_fen, price)
        wexp, wsoon, wnext = self._warehouse_expiry()
        open_ = not st.done
        return {
            "day": np.full(N, d, dtype=np.int32),
            "weekday": np.full(N, f.weekday[d], dtype=np.int32),
            "workday": np.full(N, int(f.workday[d] and open_), dtype=np.int32),
            "t_max_c": np.full(N, f.t_max[d], dtype=np.float64),
            "precip_mm": np.full(N, f.precip[d], dtype=np.float64),
            "cash": st.cash / 100.0,
            "slot_product": st.slot_k.copy(),
            "slot_units": st.slot_q.astype(np.int32),
            "slot_expired": expired,
            "slot_expiring": expiring,
            "slot_next_expiry": nxt,
            "slot_price": price,
            "slot_sold": st.sold.astype(np.int32),
            "slot_revenue": st.revenue / 100.0,
            "slot_cogs": st.cogs / 100.0,
            "last_visit": st.last_visit.astype(np.int32),
            "warehouse_units": st.wh_q.astype(np.int32),
            "warehouse_expired": wexp,
            "warehouse_expiring": wsoon,
            "warehouse_next_expiry": wnext,
            "in_transit": st.transit.astype(np.int32),
            "visit_mask": np.full((N, f.n_machines), int(f.workday[d] and open_), dtype=np.int8),
            "stock_mask": (st.wh_q > 0).astype(np.int8),
        }

    def _slot_expiry(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """(N, M, S) expired units, units expiring within 7 days and next expiry day (0: none) of each slot."""
        st = self._state()
        return _expiry(st.shelf, st.slot_k.shape, st.day)

    def _warehouse_expiry(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        st = self._state()
        return _expiry(st.wh, st.wh_q.shape, st.day)


@compiled(nogil=True, boundscheck=False)
def slot_prices(slot_k: Int32, price: Int32, ref_fen: IntArray, out: FloatArray) -> None:  # pragma: no cover
    """out[n, m, s] = price[n, m, k] / ref_fen[k] of each slot's product k (0.0 for an empty slot)."""
    N, M, S = slot_k.shape
    for n in range(N):
        for m in range(M):
            for s in range(S):
                k = slot_k[n, m, s]
                out[n, m, s] = price[n, m, k] / ref_fen[k] if k >= 0 else 0.0


def _expiry(
    table: BatchTable, shape: tuple[int, ...], day: int
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
    """Expired, expiring-soon and next-expiry arrays of a table's rows (`batches.table_expiry`), shaped `shape`."""
    out = np.empty((3, len(table.used)), dtype=np.int32)
    table_expiry(table.expiry, table.qty, table.used, day, SOON_DAYS, out[0], out[1], out[2])
    return out[0].reshape(shape), out[1].reshape(shape), out[2].reshape(shape)

"""The array baseline's memory of N runs (`Book`): the baseline's `State`, laid out for arrays.

The baseline keeps (M, K) arrays of which only the products a machine has carried or held are ever non-zero;
here those live in per-machine *entries* (one per product ever carried or held at the machine, `index` maps
(run, machine, product) to it): cumulative units and exposure, the rolling window's sums, `dropped`. What a
machine carries now is in the policy's own slots (`pk`, `active`, `phase`, `shelf`): the products it would put
in the env's slots at its next visit. The rolling window is a ring of slot snapshots; every sum is kept so that
it equals the baseline's to the bit (integers, and exposure levels whose float32 sums are exact).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.state import State, Static
from autovend.arrays.kernel import sequential_sums

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
FIRST_ENTRIES = 96  # entries per machine to start with (the table widens when a machine needs more)


@dataclass(eq=False)
class Book:
    """N runs' memory (see the module docstring); slot and entry arrays are (N, M, S) and (N, M, P)."""

    pk: IntArray  # (N, M, S) product of each policy slot, -1 = free
    active: BoolArray  # (N, M, S) carried
    phase: BoolArray  # (N, M, S) no longer carried, selling down (`phase_out`)
    shelf: IntArray  # (N, M, S) units on the shelf, as the book keeps them
    index: npt.NDArray[np.int32]  # (N, M, K) entry of each product at each machine, -1 = none
    used: IntArray  # (N, M) entries in use
    ek: IntArray  # (N, M, P) product of each entry
    cu: FloatArray  # (N, M, P) units sold since the start (`cum_units`)
    ce: FloatArray  # (N, M, P) exposure-days since the start (`cum_expo`)
    dropped: BoolArray  # (N, M, P)
    wu: IntArray  # (N, M, P) units sold in the window
    we: FloatArray  # (N, M, P) exposure-days in the window (sums of float32 levels, exact)
    ring_k: IntArray  # (W, N, M, S) each window day's slot products
    ring_level: npt.NDArray[np.int8]  # (W, N, M, S) min(units, facing) on the shelf that day
    ring_units: IntArray  # (W, N, M, S) units sold that day
    ring_machine_units: IntArray  # (W, N, M)
    ring_stocked: BoolArray  # (W, N, M) the machine held a unit that day
    gp_hist: FloatArray  # (W, N, M) gross profit of each machine-day
    arm_hist: npt.NDArray[np.int8]  # (W, N, M) -1 none, 0 incumbent, 1 candidate
    inactive_since: IntArray  # (N, K)
    last_visit: IntArray  # (N, M)
    cycle: IntArray  # (N, M)
    first_visit: IntArray  # (N, M)
    slot_day: IntArray  # (M,) weekday of each machine's weekly service
    must_visit_by: IntArray  # (N, M)
    opening_day: int
    price_group: IntArray  # (M,)
    half: IntArray  # (M,) crossover half
    mult: IntArray  # (N, G) percent
    cand: IntArray  # (N, G)
    direction: IntArray  # (N, G)
    trial_start: IntArray  # (N, G)
    fails: IntArray  # (N, G)
    hold_until: IntArray  # (N, G)
    gp_sum: FloatArray  # (N, M, 2)
    gp_n: IntArray  # (N, M, 2)
    slot_cuts: IntArray  # (N,) clearance products left out for want of a free slot (the baseline has no slots)

    @classmethod
    def new(cls, st: Static, s0: State, cfg: BaselineConfig, n_runs: int, slots: int) -> Book:
        """N runs at the baseline's opening state `s0` (the same for every run)."""
        N, M, K, W, S = n_runs, len(st.device_ids), len(st.sku_ids), cfg.window_days, slots
        carried = int(s0.active.sum(axis=1).max())
        if carried > S:
            raise ValueError(f"the opening assortment puts {carried} products on a machine; give the env slots >= that")
        pk = np.full((N, M, S), -1, dtype=np.int64)
        for m in range(M):  # the opening assortment in catalog order
            ks = np.flatnonzero(s0.active[m])
            pk[:, m, : len(ks)] = ks
        G = len(s0.mult)

        def rep(x: Any, dtype: Any = None) -> Any:
            return np.broadcast_to(np.asarray(x, dtype=dtype), (N, *np.shape(x))).copy()

        book = cls(
            pk=pk,
            active=pk >= 0,
            phase=np.zeros((N, M, S), dtype=bool),
            shelf=np.zeros((N, M, S), dtype=np.int64),
            index=np.full((N, M, K), -1, dtype=np.int32),
            used=np.zeros((N, M), dtype=np.int64),
            ek=np.full((N, M, FIRST_ENTRIES), -1, dtype=np.int64),
            cu=np.zeros((N, M, FIRST_ENTRIES)),
            ce=np.zeros((N, M, FIRST_ENTRIES)),
            dropped=np.zeros((N, M, FIRST_ENTRIES), dtype=bool),
            wu=np.zeros((N, M, FIRST_ENTRIES), dtype=np.int64),
            we=np.zeros((N, M, FIRST_ENTRIES)),
            ring_k=np.full((W, N, M, S), -1, dtype=np.int64),
            ring_level=np.zeros((W, N, M, S), dtype=np.int8),
            ring_units=np.zeros((W, N, M, S), dtype=np.int64),
            ring_machine_units=np.zeros((W, N, M), dtype=np.int64),
            ring_stocked=np.zeros((W, N, M), dtype=bool),
            gp_hist=np.zeros((W, N, M)),
            arm_hist=np.full((W, N, M), -1, dtype=np.int8),
            inactive_since=rep(s0.inactive_since, np.int64),
            last_visit=rep(s0.last_visit, np.int64),
            cycle=rep(s0.cycle, np.int64),
            first_visit=rep(s0.first_visit, np.int64),
            slot_day=s0.slot.copy(),
            must_visit_by=rep(s0.must_visit_by, np.int64),
            opening_day=int(s0.opening_day),
            price_group=s0.price_group.copy(),
            half=s0.group.copy(),
            mult=rep(s0.mult, np.int64),
            cand=rep(s0.cand, np.int64),
            direction=rep(s0.direction, np.int64),
            trial_start=rep(s0.trial_start, np.int64),
            fails=rep(s0.fails, np.int64),
            hold_until=rep(s0.hold_until, np.int64),
            gp_sum=np.zeros((N, M, 2)),
            gp_n=np.zeros((N, M, 2), dtype=np.int64),
            slot_cuts=np.zeros(N, dtype=np.int64),
        )
        rn, rm, rs = np.nonzero(book.active)
        book.entries(rn, rm, pk[rn, rm, rs])
        assert book.mult.shape[1] == G
        return book

    # ------------------------------------------------------------------ entries

    def entries(self, n: IntArray, m: IntArray, k: IntArray) -> IntArray:
        """The entries of (run, machine, product) triples, made where missing (triples may repeat)."""
        p = self.index[n, m, k].astype(np.int64)
        new = p < 0
        if new.any():
            M, K = self.index.shape[1], self.index.shape[2]
            key = np.unique((n[new] * M + m[new]) * K + k[new])
            nn, mm, kk = key // (M * K), (key // K) % M, key % K
            first = np.r_[True, (nn[1:] != nn[:-1]) | (mm[1:] != mm[:-1])]
            idx = np.arange(len(key))
            rank = idx - np.maximum.accumulate(np.where(first, idx, 0))
            slot = self.used[nn, mm] + rank
            self._widen(int(slot.max()) + 1)
            self.index[nn, mm, kk] = slot
            self.ek[nn, mm, slot] = kk
            np.add.at(self.used, (nn, mm), 1)
            p = self.index[n, m, k].astype(np.int64)
        return p

    def _widen(self, need: int) -> None:
        P = self.ek.shape[2]
        if need <= P:
            return
        extra = max(need, 2 * P) - P

        def grow(a: np.ndarray, fill: Any) -> np.ndarray:
            return np.concatenate([a, np.full((*a.shape[:2], extra), fill, dtype=a.dtype)], axis=2)

        self.ek, self.cu, self.ce = grow(self.ek, -1), grow(self.cu, 0.0), grow(self.ce, 0.0)
        self.dropped, self.wu, self.we = grow(self.dropped, False), grow(self.wu, 0), grow(self.we, 0.0)

    # ------------------------------------------------------------------ the day's books

    def sync_sales(self, obs: dict[str, np.ndarray], day: int, W: int, sku_rank: IntArray) -> None:
        """Book the settled sales of `day` (`observe.sync_sales`): window, cumulative units, shelves, gross profit."""
        j = day % W
        sold = obs["slot_sold"].astype(np.int64)
        n, m, s = np.nonzero(sold)
        k = obs["slot_product"][n, m, s].astype(np.int64)
        u = sold[n, m, s]
        self.ring_units[j] = 0
        self.ring_units[j][n, m, s] = u
        self.ring_machine_units[j] = 0
        self.gp_hist[j] = 0.0
        if not len(n):
            return
        p = self.entries(n, m, k)
        self.wu[n, m, p] += u
        self.cu[n, m, p] += u
        ps = self.pk[n, m, :] == k[:, None]  # the policy slot holding the product
        s_book = np.argmax(ps, axis=1)
        self.shelf[n, m, s_book] = np.maximum(self.shelf[n, m, s_book] - u, 0)
        np.add.at(self.ring_machine_units[j], (n, m), u)
        gp = obs["slot_revenue"][n, m, s] - obs["slot_cogs"][n, m, s]
        N, M = self.last_visit.shape
        # the records list a day's sales by device and product id: each machine's sum runs in product id order
        self.gp_hist[j] = sequential_sums(n * M + m, sku_rank[k], gp, N * M, np.zeros(N * M)).reshape(N, M)

    def record_exposure(self, day: int, W: int, facing: int) -> None:
        """Today's exposure (shelves after today's moves) into the window and the cumulative book."""
        j = day % W
        old_k, old_level, old_units = self.ring_k[j], self.ring_level[j], self.ring_units[j]
        n, m, s = np.nonzero(old_k >= 0)
        if len(n):
            p = self.index[n, m, old_k[n, m, s]].astype(np.int64)
            self.wu[n, m, p] -= old_units[n, m, s]
            self.we[n, m, p] -= LEVELS32[facing][old_level[n, m, s]]
        level = np.where(self.pk >= 0, np.minimum(self.shelf, facing), 0).astype(np.int8)
        self.ring_k[j] = self.pk
        self.ring_level[j] = level
        self.ring_units[j] = 0
        self.ring_machine_units[j] = 0
        self.gp_hist[j] = 0.0
        self.ring_stocked[j] = (level > 0).any(axis=2)
        n, m, s = np.nonzero(level)
        if len(n):
            p = self.entries(n, m, self.pk[n, m, s])
            lv = level[n, m, s]
            self.we[n, m, p] += LEVELS32[facing][lv]
            self.ce[n, m, p] += LEVELS64[facing][lv]


def _levels(facing: int, dtype: Any) -> FloatArray:
    """Exposure of 0..facing units as the baseline computes it (min(units, facing) / facing), in `dtype`."""
    return (np.arange(facing + 1) / float(facing)).astype(dtype).astype(np.float64)


class _LevelTable(dict[int, FloatArray]):
    def __init__(self, dtype: Any) -> None:
        super().__init__()
        self._dtype = dtype

    def __missing__(self, facing: int) -> FloatArray:
        self[facing] = _levels(facing, self._dtype)
        return self[facing]


LEVELS32 = _LevelTable(np.float32)  # the window keeps exposure as float32 (`expo_hist`)
LEVELS64 = _LevelTable(np.float64)  # the cumulative book as float64 (`cum_expo`)

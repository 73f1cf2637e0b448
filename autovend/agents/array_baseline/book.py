"""The array baseline's memory of N runs (`Book`): the baseline's `State`, laid out for arrays.

The baseline keeps (M, K) arrays of which only the products a machine has carried or held are ever non-zero;
here those live in per-machine *entries* (one per product ever carried or held at the machine, `index` maps
(run, machine, product) to it): cumulative units and exposure, the rolling window's sums, `dropped`. What a
machine carries now is in the policy's own slots (`pk`, `active`, `phase`, `shelf`): the products it would put
in the env's slots at its next visit. The rolling window is a ring of slot snapshots; every sum is kept so that
it equals the baseline's to the bit (integers, and exposure levels whose float32 sums are exact).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from autovend.agents.array_baseline.exposure_kernel import locate, put_in, shelf_levels, take_out
from autovend.agents.array_baseline.rows import list_order
from autovend.agents.baseline.config import BaselineConfig
from autovend.agents.baseline.state import State, Static
from autovend.arrays.kernel import nonzero, sequential_sums
from autovend.arrays.merge import SortedColumns
from autovend.distinct import distinct

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
FIRST_ENTRIES = 96  # entries per machine to start with (the table widens when a machine needs more)


@dataclass(eq=False)
class Book:
    """N runs' memory (see the module docstring); slot and entry arrays are (N, M, S) and (N, M, P)."""

    pk: IntArray  # (N, M, S) product of each policy slot, -1 = free
    active: BoolArray  # (N, M, S) carried
    carriers: IntArray  # (N, K) machines carrying each product (`active` counted; kept with it: `set_active`)
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
    ring_k: npt.NDArray[np.int32]  # (W, N, M, S) each window day's slot products
    ring_level: npt.NDArray[np.int8]  # (W, N, M, S) min(units, facing) on the shelf that day
    ring_units: npt.NDArray[np.int32]  # (W, N, M, S) units sold that day
    ring_p: npt.NDArray[np.int16]  # (W, N, M, S) the entry of each slot's product that day (-1: none or not read)
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
    # every entry by run, machine and product (rows key, n, m, p, k), kept up to date as entries are made
    _sorted: SortedColumns | None = None
    _made: list[IntArray] = field(default_factory=list)  # keys of the entries made since `_sorted` was
    _derived: dict[object, IntArray] = field(default_factory=dict)  # arrays made from `_sorted` (`entry_array`)
    # each machine's carried slots in catalog order (`rows.list_order` of pk where active), kept until
    # `set_active` changes the machine's carried products (every change of them goes through it)
    _list: tuple[IntArray, IntArray] | None = None
    _list_stale: BoolArray | None = None

    @classmethod
    def new(cls, st: Static, s0: State, cfg: BaselineConfig, n_runs: int, slots: int) -> Book:
        """N runs at the baseline's opening state `s0` (the same for every run)."""
        N, M, K, W, S = n_runs, len(st.device_ids), len(st.sku_ids), cfg.window_days, slots
        carried = int(s0.active.sum(axis=1).max())
        if np.iinfo(np.int16).max < K:
            raise ValueError(f"the book keeps entries as int16: a catalog of {K} products is more than it can index")
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
            carriers=np.zeros((N, K), dtype=np.int64),
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
            ring_k=np.full((W, N, M, S), -1, dtype=np.int32),  # int32: a 30-day ring of slots is large
            ring_level=np.zeros((W, N, M, S), dtype=np.int8),
            ring_units=np.zeros((W, N, M, S), dtype=np.int32),
            ring_p=np.full((W, N, M, S), -1, dtype=np.int16),  # entries < K <= 2^15 (checked above)
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
        rn, rm, rs = nonzero(book.active)
        book.entries(rn, rm, pk[rn, rm, rs])
        np.add.at(book.carriers, (rn, pk[rn, rm, rs]), 1)
        assert book.mult.shape[1] == G
        return book

    def set_active(self, n: IntArray, m: IntArray, s: IntArray, on: bool) -> None:
        """Mark slots (whose `active` is `not on`, and that hold a product) carried or not, and count it."""
        self.active[n, m, s] = on
        np.add.at(self.carriers, (n, self.pk[n, m, s]), 1 if on else -1)
        if self._list_stale is not None:
            self._list_stale[n, m] = True

    def list_order(self, n: IntArray, m: IntArray) -> tuple[IntArray, IntArray]:
        """`rows.list_order(pk[n, m], active[n, m])`: rows' carried slots in catalog order (place, order)."""
        if self._list is None or self._list_stale is None:
            self._list = (np.empty(self.pk.shape, dtype=np.int64), np.empty(self.pk.shape, dtype=np.int64))
            self._list_stale = np.ones(self.pk.shape[:2], dtype=bool)
        pos, order = self._list
        stale = self._list_stale[n, m]
        if stale.any():
            ns, ms = n[stale], m[stale]
            pos[ns, ms], order[ns, ms] = list_order(self.pk[ns, ms], self.active[ns, ms])
            self._list_stale[ns, ms] = False
        return pos[n, m], order[n, m]

    # ------------------------------------------------------------------ entries

    def entries(self, n: IntArray, m: IntArray, k: IntArray) -> IntArray:
        """The entries of (run, machine, product) triples, made where missing (triples may repeat)."""
        M, K = self.index.shape[1], self.index.shape[2]
        flat = (n * M + m) * K + k  # index[n, m, k] by flat gathers
        p = self.index.reshape(-1)[flat].astype(np.int64)
        new = p < 0
        if new.any():
            key = distinct((n[new] * M + m[new]) * K + k[new])
            nn, mm, kk = key // (M * K), (key // K) % M, key % K
            first = np.r_[True, (nn[1:] != nn[:-1]) | (mm[1:] != mm[:-1])]
            idx = np.arange(len(key))
            rank = idx - np.maximum.accumulate(np.where(first, idx, 0))
            slot = self.used[nn, mm] + rank
            self._widen(int(slot.max()) + 1)
            self.index[nn, mm, kk] = slot
            self.ek[nn, mm, slot] = kk
            np.add.at(self.used, (nn, mm), 1)
            if self._sorted is not None:
                self._made.append(key)
            p = self.index.reshape(-1)[flat].astype(np.int64)
        return p

    def sorted_entries(self) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        """(n, m, p, k) of every entry in use, by run, machine and product (the (M, K) arrays' order).

        Sorted once; the entries made since are merged in at their places (keys are distinct), in place: the
        arrays returned are views, valid until entries are made and this is asked again.
        """
        M, K = self.index.shape[1], self.index.shape[2]
        if self._sorted is None:
            n, m, p = nonzero(self.ek >= 0)
            k = self.ek[n, m, p]
            key = (n * M + m) * K + k
            order = np.argsort(key)
            self._sorted = SortedColumns(np.stack([key[order], n[order], m[order], p[order], k[order]]))
            self._derived = {}
        elif self._made:
            add = np.sort(np.concatenate(self._made))
            an, am, ak = add // (M * K), (add // K) % M, add % K
            ap = self.index[an, am, ak].astype(np.int64)
            self._sorted.merge(np.stack([add, an, am, ap, ak]))  # in place: earlier views are stale
            self._derived = {}
        self._made = []
        assert self._sorted is not None
        table = self._sorted.view()
        return table[1], table[2], table[3], table[4]

    def entry_array(self, name: object, make: Callable[[], IntArray]) -> IntArray:
        """An array computed from `sorted_entries` (by `make`), kept until entries are made."""
        self.sorted_entries()
        if name not in self._derived:
            self._derived[name] = make()
        return self._derived[name]

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
        N, M, S = self.pk.shape
        sold = np.asarray(obs["slot_sold"]).reshape(-1)
        i = np.flatnonzero(sold)  # the cells that sold, in (run, machine, slot) order
        row = i // S  # run * M + machine
        n, m = np.divmod(row, M)
        k = np.asarray(obs["slot_product"]).reshape(-1)[i].astype(np.int64)
        u = sold[i].astype(np.int64)
        self.ring_units[j] = 0
        self.ring_units[j].reshape(-1)[i] = u
        self.ring_machine_units[j] = 0
        self.gp_hist[j] = 0.0
        if not len(i):
            return
        p = self.entries(n, m, k)
        f = row * self.ek.shape[2] + p
        self.wu.reshape(-1)[f] += u
        self.cu.reshape(-1)[f] += u
        shelf = self.shelf.reshape(-1)
        # the policy slot holding the product: the env's slot of the sale where the policy has it there (always,
        # while the env carries out the policy's slots), else a search
        at = i.copy()
        elsewhere = self.pk.reshape(-1)[i] != k
        if elsewhere.any():
            at[elsewhere] = row[elsewhere] * S + self._slot_of(row[elsewhere], k[elsewhere])
        shelf[at] = np.maximum(shelf[at] - u, 0)
        np.add.at(self.ring_machine_units[j].reshape(-1), row, u)
        gp = np.asarray(obs["slot_revenue"]).reshape(-1)[i] - np.asarray(obs["slot_cogs"]).reshape(-1)[i]
        # the records list a day's sales by device and product id: each machine's sum runs in product id order
        self.gp_hist[j] = sequential_sums(row, sku_rank[k], gp, N * M, np.zeros(N * M)).reshape(N, M)

    def _slot_of(self, row: IntArray, k: IntArray) -> IntArray:
        """The first policy slot of machine rows `row` (run * M + machine) holding product k (0 where none holds it).

        What `np.argmax(pk[n, m, :] == k, axis=1)` gives, from one sorted list of every held slot's key.
        """
        S = self.pk.shape[2]
        K = self.index.shape[2]
        held = np.flatnonzero(self.pk.reshape(-1) >= 0)
        key = np.sort(((held // S) * K + self.pk.reshape(-1)[held]) * S + held % S)
        want = (row * K + k) * S
        at = np.minimum(np.searchsorted(key, want), max(len(key) - 1, 0))
        if not len(key):
            return np.zeros(len(row), dtype=np.int64)
        found = key[at]
        return np.where(found // S == want // S, found % S, 0)

    def record_exposure(self, day: int, W: int, facing: int) -> None:
        """Today's exposure (shelves after today's moves) into the window and the cumulative book.

        The window's oldest day leaves it first; both walks are compiled (`exposure_kernel`).
        """
        j, before = day % W, (day - 1) % W
        S = self.pk.shape[2]
        K = self.index.shape[2]
        index = self.index.reshape(-1)
        wu, we = self.wu.reshape(-1), self.we.reshape(-1)  # views: the book's arrays are contiguous
        ring_k, ring_level, ring_units, ring_p = self.ring_k[j], self.ring_level[j], self.ring_units[j], self.ring_p[j]
        take_out(ring_k.reshape(-1), ring_level.reshape(-1), ring_units.reshape(-1), ring_p.reshape(-1), index, S, K,
                 LEVELS32[facing], wu, we)  # fmt: skip
        pk = self.pk.reshape(-1)
        level = np.empty(len(pk), dtype=np.int8)
        count = shelf_levels(pk, self.shelf.reshape(-1), facing, level)
        p_today = np.empty(len(pk), dtype=np.int16)
        # yesterday's slots and entries (with a one-day window, the slot about to be replaced: still intact here)
        known_k, known_p = self.ring_k[before].reshape(-1), self.ring_p[before].reshape(-1)
        p = locate(pk, level, count, index, S, K, known_k, known_p, p_today)
        new = p < 0
        if new.any():  # products new at their machine: entries made (the entry arrays may widen)
            cell = np.flatnonzero(level)[new]
            n, m = np.divmod(cell // S, self.pk.shape[1])
            p[new] = self.entries(n, m, pk[cell])
            p_today[cell] = p[new]
        ring_k[...] = self.pk
        ring_level[...] = level.reshape(self.pk.shape)
        ring_units[...] = 0
        ring_p[...] = p_today.reshape(self.pk.shape)
        self.ring_machine_units[j] = 0
        self.gp_hist[j] = 0.0
        self.ring_stocked[j] = (ring_level > 0).any(axis=2)
        put_in(p, level, S, LEVELS32[facing], LEVELS64[facing], self.we.reshape(-1), self.ce.reshape(-1))


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

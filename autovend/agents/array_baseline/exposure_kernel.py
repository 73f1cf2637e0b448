"""`Book.record_exposure`'s walks over the slots, compiled: the window's oldest day out, today's shelves in.

Each walk is numpy's `a[f] -= x` / `a[f] += x` over the flat entry arrays, to the bit: every value written is
worked out from the array as it was before the walk, and where two slots share an entry the later slot's write
is the one that stays (numpy's buffered fancy operators; a product is in one slot of a machine, so this is a
corner). A slot whose product has no entry at its machine reads entry -1, as numpy's gather of -1 would (its
units and level are 0, so nothing changes). The entries of the slots are kept beside the ring (`ring_p`), so a
day's walks look up the (run, machine, product) index only for products placed since (`locate`).
`tests/agents/test_array_baseline_exposure.py` holds them to the numpy form.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.calibration.kernels import compiled

IntArray = npt.NDArray[np.int64]
Int32 = npt.NDArray[np.int32]
Int16 = npt.NDArray[np.int16]
Int8 = npt.NDArray[np.int8]
FloatArray = npt.NDArray[np.float64]


@compiled(nogil=True, boundscheck=False)
def take_out(
    old_k: Int32, old_level: Int8, old_units: Int32, old_p: Int16, index: Int32, S: int, K: int,
    levels: FloatArray, wu: IntArray, we: FloatArray,
) -> None:  # pragma: no cover - compiled  # fmt: skip
    """wu[f] -= units, we[f] -= levels[level] over a window day's held slots (old_k >= 0), all flat.

    old_*: the ring's (N * M * S) day, old_p the slots' entries then (-1: look it up); index: the book's
    (N * M * K) entries; wu, we: (N * M * E).
    """
    E = len(wu) // (len(old_k) // S)
    C = 0
    for i in range(len(old_k)):
        if old_k[i] >= 0:
            C += 1
    at = np.empty(C, dtype=np.int64)
    units = np.empty(C, dtype=np.int64)
    expo = np.empty(C)
    c = 0
    for i in range(len(old_k)):
        if old_k[i] >= 0:
            row = i // S
            p = np.int64(old_p[i]) if old_p[i] >= 0 else np.int64(index[row * K + old_k[i]])
            f = row * E + p
            if f < 0:  # numpy's -1
                f += len(wu)
            at[c] = f
            units[c] = wu[f] - old_units[i]
            expo[c] = we[f] - levels[old_level[i]]
            c += 1
    for c in range(C):
        wu[at[c]] = units[c]
        we[at[c]] = expo[c]


@compiled(nogil=True, boundscheck=False)
def shelf_levels(pk: IntArray, shelf: IntArray, facing: int, level: Int8) -> int:  # pragma: no cover - compiled
    """level = min(shelf, facing) where a slot holds a product (0 elsewhere), as int8; returns the cells not 0."""
    C = 0
    for i in range(len(pk)):
        v = 0
        if pk[i] >= 0:
            v = min(shelf[i], facing)
        level[i] = v
        if level[i] != 0:
            C += 1
    return C


@compiled(nogil=True, boundscheck=False)
def locate(
    pk: IntArray, level: Int8, count: int, index: Int32, S: int, K: int, known_k: Int32, known_p: Int16,
    p_today: Int16,
) -> IntArray:  # pragma: no cover - compiled  # fmt: skip
    """The entry of each slot with a level (count of them, in slot order; -1: none yet).

    p_today gets every held slot's entry where known (-1 elsewhere). known_k, known_p: a ring day's slots and
    entries, reused where the slot holds the same product (entries never move); the index is read for the
    others with a level.
    """
    out = np.empty(count, dtype=np.int64)
    c = 0
    for i in range(len(pk)):
        k = pk[i]
        p = -1
        if k >= 0:
            if known_k[i] == k and known_p[i] >= 0:
                p = int(known_p[i])
            elif level[i] != 0:
                p = int(index[(i // S) * K + k])
        p_today[i] = p
        if level[i] != 0:
            out[c] = p
            c += 1
    return out


@compiled(nogil=True, boundscheck=False)
def put_in(
    p: IntArray, level: Int8, S: int, levels32: FloatArray, levels64: FloatArray, we: FloatArray, ce: FloatArray
) -> None:  # pragma: no cover - compiled
    """we[f] += levels32[lv], ce[f] += levels64[lv] over the slots with a level lv (their entries p, in order)."""
    E = len(we) // (len(level) // S)
    C = len(p)
    at = np.empty(C, dtype=np.int64)
    window = np.empty(C)
    total = np.empty(C)
    c = 0
    for i in range(len(level)):
        lv = level[i]
        if lv != 0:
            f = (i // S) * E + p[c]
            at[c] = f
            window[c] = we[f] + levels32[lv]
            total[c] = ce[f] + levels64[lv]
            c += 1
    for c in range(C):
        we[at[c]] = window[c]
        ce[at[c]] = total[c]

"""Two tables sorted by a key merged into one, in one compiled pass.

What `np.insert` at `np.searchsorted`'s places gives, for every row of the tables at once.

A table is a (rows, length) int64 array whose row 0 is the key, ascending; the other rows ride along.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.calibration.kernels import compiled

IntArray = npt.NDArray[np.int64]


def merge_sorted(old: IntArray, add: IntArray) -> IntArray:
    """`old` with the columns of `add` put in at their places by key (row 0).

    An added key goes before an equal old one, added columns keep their order among equals (`np.insert(old,
    np.searchsorted(old[0], add[0]), add, axis=1)`). Both tables must be sorted by key; a table that is not is
    refused (a ValueError).
    """
    old = np.ascontiguousarray(old, dtype=np.int64)
    add = np.ascontiguousarray(add, dtype=np.int64)
    if old.ndim != 2 or add.ndim != 2 or old.shape[0] != add.shape[0] or old.shape[0] < 1:
        raise ValueError(f"merge_sorted needs two tables with the same rows, key first; got {old.shape}, {add.shape}")
    out = np.empty((old.shape[0], old.shape[1] + add.shape[1]), dtype=np.int64)
    if not _merge(old, add, out):
        raise ValueError("merge_sorted needs both tables sorted by their key (row 0), ascending")
    return out


@compiled(nogil=True, boundscheck=False)
def _merge(old: IntArray, add: IntArray, out: IntArray) -> bool:  # pragma: no cover - compiled
    """The two-pointer merge into `out`; False (out unfinished) when a table's keys are not ascending."""
    R, L = old.shape
    A = add.shape[1]
    for i in range(1, L):
        if old[0, i] < old[0, i - 1]:
            return False
    for j in range(1, A):
        if add[0, j] < add[0, j - 1]:
            return False
    i = j = 0
    for c in range(L + A):
        if j < A and (i >= L or add[0, j] <= old[0, i]):
            for r in range(R):
                out[r, c] = add[r, j]
            j += 1
        else:
            for r in range(R):
                out[r, c] = old[r, i]
            i += 1
    return True

"""Columns sorted by a key, kept in a buffer with room to spare, with new columns merged in place.

A table is a (rows, length) int64 array whose row 0 is the key, ascending; the other rows ride along. Merging
in place, from the back, writes no new array: a long table that grows a little each day costs one pass over
its tail, not a fresh allocation (whose pages the system hands out one fault at a time).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.calibration.kernels import compiled

IntArray = npt.NDArray[np.int64]


class SortedColumns:
    """A key-sorted table (`rows` x n) in a buffer with spare room; `view` reads it, `merge` puts columns in."""

    SPARE = 1.25  # the buffer's room over what it holds, when it grows

    def __init__(self, table: IntArray) -> None:
        table = np.asarray(table, dtype=np.int64)
        if table.ndim != 2 or table.shape[0] < 1:
            raise ValueError(f"a sorted table is (rows, length) with the key first; got shape {table.shape}")
        if not _ascending(table[0]):
            raise ValueError("the table must be sorted by its key (row 0), ascending")
        self.n = table.shape[1]
        self.buf = np.empty((table.shape[0], int(self.n * self.SPARE) + 64), dtype=np.int64)
        self.buf[:, : self.n] = table

    def view(self) -> IntArray:
        """The table (a view: valid until the next `merge`)."""
        return self.buf[:, : self.n]

    def merge(self, add: IntArray) -> None:
        """Put the columns of `add` (sorted by key) in at their places, in place.

        What `np.insert(table, np.searchsorted(table[0], add[0]), add, axis=1)` gives: an added key goes before an
        equal one already there, added columns keep their order. An unsorted `add` or one with other rows is
        refused (a ValueError), the table left as it was.
        """
        add = np.ascontiguousarray(add, dtype=np.int64)
        if add.ndim != 2 or add.shape[0] != self.buf.shape[0]:
            raise ValueError(f"merge needs columns of {self.buf.shape[0]} rows, key first; got shape {add.shape}")
        if not _ascending(add[0]):
            raise ValueError("merge needs the added columns sorted by their key (row 0), ascending")
        need = self.n + add.shape[1]
        if need > self.buf.shape[1]:
            grown = np.empty((self.buf.shape[0], int(need * self.SPARE) + 64), dtype=np.int64)
            grown[:, : self.n] = self.buf[:, : self.n]
            self.buf = grown
        _merge_back(self.buf, self.n, add)
        self.n = need


@compiled(nogil=True, boundscheck=False)
def _ascending(key: IntArray) -> bool:  # pragma: no cover - compiled
    for i in range(1, len(key)):  # noqa: SIM110 - a compiled loop (numba has no all() of a generator)
        if key[i] < key[i - 1]:
            return False
    return True


@compiled(nogil=True, boundscheck=False)
def _merge_back(buf: IntArray, n: int, add: IntArray) -> None:  # pragma: no cover - compiled
    """Merge `add` into buf[:, :n] in place, from the back (the largest key last; equal keys: the old one last)."""
    R = buf.shape[0]
    i = n - 1
    j = add.shape[1] - 1
    c = n + add.shape[1] - 1
    while j >= 0:
        if i >= 0 and buf[0, i] >= add[0, j]:
            for r in range(R):
                buf[r, c] = buf[r, i]
            i -= 1
        else:
            for r in range(R):
                buf[r, c] = add[r, j]
            j -= 1
        c -= 1

"""numpy's sums of float64 rows, compiled, to the bit: numpy's `pairwise_sum` and rows given by their entries.

numpy's add-reduce of a contiguous row is a pairwise sum: a stretch of up to `PAIRWISE_BLOCK` (128) entries is
summed in `UNROLL` (8) accumulators and a tail (under 8 entries: one after the other), a longer one is split in
two halves (the left one rounded down to a multiple of 8) whose sums are added. `pairwise_sum` walks that tree
over a contiguous array with an explicit stack (numba's on-disk cache cannot hold a recursive function: a
recursive version compiled and passed, and crashed every later process that loaded it from the cache).

`sorted_row_sums` gives the sum numpy would take of each row of a dense block (zeros but at the given entries)
from the entries alone: a stretch without entries sums to 0.0, so only the stretches that hold entries are
walked, and a leaf's 8 accumulators add its entries alone, from 0.0. Leaving the zeros out changes no partial sum
but the sign of a zero one, and numpy's sum is its identity 0.0 plus the tree's: a zero sum is 0.0 either way.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from autovend.calibration.kernels import compiled

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

PAIRWISE_BLOCK = 128  # numpy's PW_BLOCKSIZE: stretches up to this length are summed in 8 accumulators
UNROLL = 8
STACK = 64  # stretches from the root down: a row of 2**63 entries is under 64 halvings deep


@compiled(nogil=True, boundscheck=False)
def _block_sum(a: FloatArray, lo: int, n: int) -> float:  # pragma: no cover - compiled
    """numpy's sum of a block of n <= 128 entries: sequential under 8, else 8 accumulators and the tail."""
    if n < UNROLL:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    body = n - n % UNROLL
    i = UNROLL
    while i < body:
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += UNROLL
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for k in range(lo + body, lo + n):
        res += a[k]
    return res


@compiled(nogil=True, boundscheck=False)
def _half(n: int) -> int:  # pragma: no cover - compiled
    """Where numpy splits a stretch of n > 128 entries: half, down to a multiple of 8."""
    n2 = n // 2
    return n2 - n2 % UNROLL


@compiled(nogil=True, boundscheck=False)
def pairwise_sum(a: FloatArray, lo: int, n: int) -> float:  # pragma: no cover - compiled
    """numpy's `a[lo:lo + n].sum()` of a contiguous float64 array, to the bit (numpy's `pairwise_sum`).

    Above 128 entries numpy adds the sums of the two halves, recursively: `_tree_sum` walks that tree.
    """
    if n <= PAIRWISE_BLOCK:  # one leaf (no stack to make)
        return 0.0 + _block_sum(a, lo, n)  # numpy adds the sum to its identity: -0.0 comes out 0.0
    starts, sizes, lefts, right_next = _stack()
    return _tree_sum(a, lo, n, _NO_POS, 0, 0, True, starts, sizes, lefts, right_next)


@compiled(nogil=True, boundscheck=False)
def _leaf_from_entries(
    pos: IntArray, val: FloatArray, i0: int, i1: int, lo: int, n: int
) -> float:  # pragma: no cover - compiled
    """`_block_sum` of a leaf of n <= 128 places whose non-zeros are entries i0..i1, but for the sign of a zero.

    Adding a zero leaves a partial sum as it was (up to the sign of a zero sum), so each accumulator is the sum of
    its own entries from 0.0, in order, and the tail adds its entries after them.
    """
    res = 0.0
    if n < UNROLL:
        for e in range(i0, i1):
            res += val[e]
        return res
    body = n - n % UNROLL
    r0 = r1 = r2 = r3 = r4 = r5 = r6 = r7 = 0.0
    e = i0
    while e < i1 and pos[e] - lo < body:
        lane = (pos[e] - lo) % UNROLL
        x = val[e]
        if lane == 0:
            r0 += x
        elif lane == 1:
            r1 += x
        elif lane == 2:
            r2 += x
        elif lane == 3:
            r3 += x
        elif lane == 4:
            r4 += x
        elif lane == 5:
            r5 += x
        elif lane == 6:
            r6 += x
        else:
            r7 += x
        e += 1
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while e < i1:
        res += val[e]
        e += 1
    return res


_NO_POS = np.zeros(0, dtype=np.int64)  # `_tree_sum`'s entries when it sums a dense stretch


@compiled(nogil=True, boundscheck=False)
def _stack() -> tuple[IntArray, IntArray, FloatArray, npt.NDArray[np.bool_]]:  # pragma: no cover - compiled
    """`_tree_sum`'s stack: the stretches from the root down (start, size), a left half's sum, which half is next."""
    return (
        np.empty(STACK, dtype=np.int64),
        np.empty(STACK, dtype=np.int64),
        np.empty(STACK),
        np.zeros(STACK, dtype=np.bool_),
    )


@compiled(nogil=True, boundscheck=False)
def _tree_sum(
    val: FloatArray,
    base: int,
    length: int,
    pos: IntArray,
    i0: int,
    i1: int,
    dense: bool,
    starts: IntArray,
    sizes: IntArray,
    lefts: FloatArray,
    right_next: npt.NDArray[np.bool_],
) -> float:  # pragma: no cover - compiled
    """numpy's sum of a row of `length`, walking its pairwise tree with an explicit stack.

    dense: the row is val[base:base + length]; else its non-zeros are entries i0..i1 (positions `pos`, sorted,
    values `val`), and a stretch without entries sums to a zero.
    """
    cursor = i0
    top = 0
    starts[0], sizes[0] = 0, length
    while True:
        lo, size = starts[top], sizes[top]
        end = lo + size
        if not dense and (cursor >= i1 or pos[cursor] >= end):  # no entry in the stretch: its sum is a zero
            v = 0.0
        elif size > PAIRWISE_BLOCK:  # go down the left half
            right_next[top] = False
            starts[top + 1], sizes[top + 1] = lo, _half(size)
            top += 1
            continue
        elif dense:
            v = _block_sum(val, base + lo, size)
        else:  # a leaf: its accumulators add its entries alone
            first = cursor
            while cursor < i1 and pos[cursor] < end:
                cursor += 1
            v = _leaf_from_entries(pos, val, first, cursor, lo, size)
        top -= 1
        while top >= 0 and right_next[top]:  # both halves summed: the stretch's sum goes up
            v = lefts[top] + v
            top -= 1
        if top < 0:
            return 0.0 + v  # numpy adds the sum to its identity: -0.0 comes out 0.0
        lefts[top] = v  # a left half summed: on to the right half
        right_next[top] = True
        h = _half(sizes[top])
        starts[top + 1], sizes[top + 1] = starts[top] + h, sizes[top] - h
        top += 1


@compiled(nogil=True, boundscheck=False)
def sorted_row_sums(
    row: IntArray, pos: IntArray, val: FloatArray, length: IntArray, out: FloatArray
) -> None:  # pragma: no cover - compiled
    """out[r] = numpy's sum of row r (of `length[r]`, zeros but at its entries) for every row with entries.

    The entries come by row, then position, distinct, each inside its row; anything else raises ValueError.
    """
    n_rows = len(out)
    starts, sizes, lefts, right_next = _stack()
    E = len(row)
    i = 0
    while i < E:
        r = row[i]
        if r < 0 or r >= n_rows or (i > 0 and r < row[i - 1]):
            raise ValueError("entries must come by row (rows 0..n_rows-1, ascending)")
        j = i
        while j < E and row[j] == r:
            if pos[j] < 0 or pos[j] >= length[r] or (j > i and pos[j] <= pos[j - 1]):
                raise ValueError("a row's entries must be distinct positions inside it, ascending")
            j += 1
        out[r] = _tree_sum(val, 0, length[r], pos, i, j, False, starts, sizes, lefts, right_next)
        i = j

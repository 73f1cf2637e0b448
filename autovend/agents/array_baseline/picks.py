"""The review's and the clearance's picks, compiled: each row's best valid columns in one pass over the row.

`review.top` asks this for up to a few thousand rows of the whole catalog a day. The picks are those of
`review.top_sorted` (a partial sort of each row, then a sort of its best), which the tests hold it to: per row,
the first `min(count, width)` valid columns ordered by key (`-score`), ties to the lower column. Keys that are
NaN: when `width` is below the row's length, `top_sorted` keeps only the keys up to the `width`-th smallest of
the row (NaN sorted last, invalid columns counted as `inf`), which keeps no NaN and keeps nothing at all when
fewer than `width` keys of the row are numbers; when `width` is the row's length the valid NaN keys come after
the others, in column order.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from autovend.calibration.kernels import compiled

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@compiled(nogil=True, boundscheck=False)
def best_columns(
    score: FloatArray, valid: BoolArray, count: IntArray, width: int, cols: IntArray, ok: BoolArray
) -> None:  # pragma: no cover - compiled
    """Fill cols/ok (R, width) with each row's picks (module docstring); they come in zeroed."""
    R, K = score.shape
    keys = np.empty(width)
    for r in range(R):
        w = min(count[r], width)
        if w <= 0:
            continue
        got = 0
        numbers = 0  # keys of the row that are not NaN (the invalid columns' inf among them)
        for c in range(K):
            if not valid[r, c]:
                numbers += 1
                continue
            key = -score[r, c]
            if math.isnan(key):
                continue
            numbers += 1
            if got == w and not key < keys[w - 1]:
                continue
            j = got if got < w else w - 1
            while j > 0 and keys[j - 1] > key:  # equal keys stay ahead: they have the lower columns
                keys[j] = keys[j - 1]
                cols[r, j] = cols[r, j - 1]
                j -= 1
            keys[j] = key
            cols[r, j] = c
            if got < w:
                got += 1
        if width < K and numbers < width:  # the width-th smallest key is NaN: top_sorted keeps nothing
            for j in range(got):
                cols[r, j] = 0
            continue
        if width == K:  # no bound: the valid NaN keys follow, in column order
            for c in range(K):
                if got == w:
                    break
                if valid[r, c] and math.isnan(score[r, c]):
                    cols[r, got] = c
                    got += 1
        for j in range(got):
            ok[r, j] = True

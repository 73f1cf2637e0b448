"""The baseline's shelf targets of many rows, compiled: one pass over each row instead of numpy masks over all.

`rows.shelf_targets` calls this for every machine the policy plans (the cycle's every horizon, the visits'
fills and room, the orders' levels): a few hundred to a few thousand short rows a day, where numpy's per-call
cost, not the arithmetic, was the time. The rules are `autovend.agents.baseline.targets.shelf_targets`', with
the same floating-point operations in the same order, so the integers are the baseline's (tests compare them
row by row): the facings only when even they do not fit; each product's need rounded up to at least a facing
and at most its cap; the part above the facings scaled down when over the room (whole units lost to flooring to
the fastest); the spare room shared by rate in `SHARE_ROUNDS` passes (then unit by unit, fastest first). The
sum of the weights is numpy's `np.sum` of the row's list (`autovend.arrays.pairwise.pairwise_sum`).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from autovend.agents.baseline.targets import SHARE_ROUNDS
from autovend.arrays.pairwise import pairwise_sum
from autovend.calibration.kernels import compiled

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@compiled(nogil=True, boundscheck=False)
def _first_by_rank(
    eligible: BoolArray, by_rank: IntArray, n: int, count: int, out: IntArray
) -> int:  # pragma: no cover - compiled
    """One unit more to each of the first `count` eligible entries in rank order; returns the units given."""
    given = 0
    for q in range(n):
        if given >= count:
            break
        s = by_rank[q]
        if eligible[s]:
            out[s] += 1
            given += 1
    return given


@compiled(nogil=True, boundscheck=False)
def _rank_by_speed(speed: FloatArray, by_rank: IntArray, n: int) -> None:  # pragma: no cover - compiled
    """Sort a row's entries (`by_rank[:n]`, in list order) fastest first, stably (NaN last): numpy's lexsort."""
    for j in range(1, n):
        s = by_rank[j]
        x = speed[s]
        q = j
        while q > 0:
            y = speed[by_rank[q - 1]]
            if x > y or (math.isnan(y) and not math.isnan(x)):  # -x < -y: the faster goes first
                by_rank[q] = by_rank[q - 1]
                q -= 1
            else:
                break
        by_rank[q] = s


@compiled(nogil=True, boundscheck=False)
def shelf_target_rows(
    need: FloatArray,
    rate: FloatArray,
    limit: FloatArray,
    valid: BoolArray,
    pos: IntArray,
    room: IntArray,
    facing: int,
    fill: BoolArray,
) -> IntArray:  # pragma: no cover - compiled
    """(R, S) targets of R rows (0 outside each row's list): see the module docstring.

    pos: each valid entry's place in its row's list (0..n-1). Ties in rate go in list order.
    """
    R, S = need.shape
    out = np.zeros((R, S), dtype=np.int64)
    by_rank = np.empty(S, dtype=np.int64)  # the row's entries, fastest first
    cap = np.empty(S, dtype=np.int64)
    speed = np.empty(S)
    eligible = np.empty(S, dtype=np.bool_)
    w_list = np.empty(S)  # the weights in list order
    for i in range(R):
        row = out[i]
        n = 0
        by_rank[:] = -1
        for s in range(S):
            if valid[i, s]:
                p = pos[i, s]
                if p < 0 or p >= S or by_rank[p] >= 0:
                    raise ValueError("a row's list places (pos) must be 0..n-1, each once")
                by_rank[p] = s  # the list order, then by speed below
                n += 1
                speed[s] = max(rate[i, s], 0.0) if not math.isnan(rate[i, s]) else rate[i, s]  # np.maximum
        for q in range(n):  # n distinct places: they must be 0..n-1
            if by_rank[q] < 0:
                raise ValueError("a row's list places (pos) must be 0..n-1, each once")
        if n == 0 or room[i] <= 0:
            continue
        _rank_by_speed(speed, by_rank, n)
        rm = room[i]
        if n * facing >= rm:  # not even the facings fit: the fastest get a facing each, the next the rest
            whole = rm // facing
            rest = rm - whole * facing
            for q in range(min(whole, n)):
                row[by_rank[q]] = facing
            if rest > 0 and whole < n:
                row[by_rank[whole]] = rest
            continue
        total = 0
        for s in range(S):
            if valid[i, s]:
                lim = limit[i, s]
                c = lim if lim > facing or math.isnan(lim) else float(facing)  # np.maximum
                cap[s] = np.int64(c)
                x = np.ceil(need[i, s] - 1e-9)
                x = x if x > facing or math.isnan(x) else float(facing)
                x = x if x < c or math.isnan(x) else c  # np.minimum
                row[s] = np.int64(x)
                total += row[s]
        if total > rm:  # the part above the facings scaled down to fit
            budget = rm - n * facing
            extra_sum = float(total - n * facing)  # the parts above the facings: whole numbers, so exact
            left = rm
            for s in range(S):
                if valid[i, s]:
                    extra = float(row[s] - facing)
                    row[s] = facing + np.int64(np.floor(extra * budget / extra_sum))
                    left -= row[s]
                    eligible[s] = facing + extra > row[s]
                else:
                    eligible[s] = False
            _first_by_rank(eligible, by_rank, n, left, row)
            continue
        spare = rm - total if fill[i] else 0
        for _ in range(SHARE_ROUNDS):  # the spare room shared by rate among products below their cap
            if spare <= 0:
                break
            any_open = False
            for s in range(S):
                eligible[s] = valid[i, s] and cap[s] > row[s] and speed[s] > 0
                any_open |= eligible[s]
                if valid[i, s]:
                    w_list[pos[i, s]] = speed[s] if eligible[s] else 0.0
            if not any_open:
                break
            wsum = pairwise_sum(w_list, 0, n)
            added = 0  # each one's share, at most up to its cap (0 everywhere: the row is stuck)
            for s in range(S):
                if eligible[s]:
                    add = min(np.int64(np.floor(spare * speed[s] / wsum)), cap[s] - row[s])
                    row[s] += add
                    added += add
            if added == 0:  # one unit each, fastest first, then the row is done
                spare -= _first_by_rank(eligible, by_rank, n, spare, row)
                break
            spare -= added
    return out

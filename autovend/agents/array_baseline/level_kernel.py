"""`targets.levels`' arithmetic, compiled: the order-up-to levels of the carried slots in three passes.

The normal distribution's functions stay scipy's (`ndtr`, `ndtri`, the baseline's own), called between the passes
on the carried slots' arrays; everything else (the means and variances over the horizon and the shelf life, the
spoilage arguments, the critical ratios, the safety stock) is the baseline's arithmetic in the same order, value
for value (`tests/agents/test_array_baseline_levels.py` holds it to the numpy form to the bit).
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
def _nan_max(a: float, b: float) -> float:  # pragma: no cover - compiled
    """np.maximum of two floats (NaN if either is)."""
    if a != a or b != b:
        return math.nan
    return a if a >= b else b


@compiled(nogil=True, boundscheck=False)
def _nan_clip(x: float, lo: float, hi: float) -> float:  # pragma: no cover - compiled
    """np.clip of a float (NaN stays NaN)."""
    return x if x != x else min(max(x, lo), hi)


@compiled(nogil=True, boundscheck=False)
def spoil_args(
    act: BoolArray,
    k: IntArray,
    mu: FloatArray,
    r_row: FloatArray,
    life: FloatArray,
    days: IntArray,
    facing: float,
    share: float,
    safety: bool,
    limit: FloatArray,
) -> tuple[IntArray, IntArray, FloatArray, FloatArray, FloatArray]:  # pragma: no cover - compiled
    """Per carried slot (row-major): (row, slot, mean need (H, C), its variance, the spoilage argument).

    days: (H, R, S) the horizons (broadcast views welcome); limit (R, S) gets the spoilage caps. The argument
    is `unsold_probability`'s (stock - 0.5 - mean) / sd over the shelf life, with stock the need or a facing
    (left 0 when no row takes safety stock).
    """
    R, S = act.shape
    H = days.shape[0]
    C = 0
    for r in range(R):
        for s in range(S):
            if act[r, s]:
                C += 1
    r_i = np.empty(C, dtype=np.int64)
    s_i = np.empty(C, dtype=np.int64)
    mean_h = np.empty((H, C))
    var_h = np.empty((H, C))
    arg = np.zeros((H, C))
    c = 0
    for r in range(R):
        for s in range(S):
            if not act[r, s]:
                continue
            r_i[c], s_i[c] = r, s
            rate = mu[r, s]
            disp = r_row[r]
            mean_life = rate * life[k[r, s]]
            limit[r, s] = np.floor(share * mean_life)
            var_life = mean_life + mean_life * mean_life / disp
            sd = math.sqrt(_nan_max(var_life, 1e-9))
            for h in range(H):
                mean = rate * float(days[h, r, s])
                mean_h[h, c] = mean
                var_h[h, c] = mean + mean * mean / disp
                if safety:
                    arg[h, c] = (_nan_max(facing, mean) - 0.5 - mean_life) / sd
            c += 1
    return r_i, s_i, mean_h, var_h, arg


@compiled(nogil=True, boundscheck=False)
def ratio_args(
    p_spoil: FloatArray,
    r_i: IntArray,
    s_i: IntArray,
    k: IntArray,
    days: IntArray,
    cost: FloatArray,
    margin: FloatArray,
    margin_row: IntArray,
    holding: float,
) -> FloatArray:  # pragma: no cover - compiled
    """`newsvendor_z`'s clipped critical ratio cu / (cu + co) of each carried slot and horizon (before ndtri).

    margin: the day's margins (price rows, K); margin_row: (R,) each row's price row.
    """
    H, C = p_spoil.shape
    out = np.empty((H, C))
    for c in range(C):
        r, s = r_i[c], s_i[c]
        kc = k[r, s]
        cu = margin[margin_row[r], kc]
        for h in range(H):
            co = _nan_max(holding * float(days[h, r, s]) + p_spoil[h, c] * cost[kc], 0.0)
            out[h, c] = _nan_clip(cu / (cu + co) if cu > 0 else 0.5, 0.5, 1.0)
    return out


@compiled(nogil=True, boundscheck=False)
def needs(
    z: FloatArray,
    mean_h: FloatArray,
    var_h: FloatArray,
    r_i: IntArray,
    s_i: IntArray,
    safety: BoolArray,
    z_max: float,
    need: FloatArray,
) -> None:  # pragma: no cover - compiled
    """need[h, r, s] = mean + z sd of each carried slot, z clipped to [0, z_max] (0 on rows without safety stock).

    z: (H, C) ndtri of the ratios, or empty when no row takes safety stock.
    """
    H, C = mean_h.shape
    for c in range(C):
        r, s = r_i[c], s_i[c]
        for h in range(H):
            zz = 0.0
            if safety[r]:
                zz = _nan_clip(z[h, c], 0.0, z_max)
            need[h, r, s] = mean_h[h, c] + zz * math.sqrt(var_h[h, c])

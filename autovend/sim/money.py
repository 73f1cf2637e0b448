"""Exact money: integer fen (1/100 CNY) inside the simulator, CNY floats only at the edges."""

from __future__ import annotations

import functools
import math
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal, InvalidOperation
from numbers import Integral, Real

FEN_PER_CNY = 100


def to_fen(x: object) -> int:
    """Amount in CNY -> integer fen, rounding half-up on the decimal digits as written.

    Floats go through their shortest repr, so `to_fen(2.675) == 268` (a binary float of 2.675 lies
    slightly below it, but the amount the user wrote is 2.675). Accepts int, float, Decimal and numpy
    scalars; raises `TypeError` for anything else (bool and str included) and `ValueError` for NaN
    and infinities.
    """
    if type(x) is float and math.isfinite(x):  # the common case, without the checks against abstract types
        return _float_to_fen(x)
    if isinstance(x, bool) or not isinstance(x, (Real, Decimal)):
        raise TypeError(f"an amount of money must be a number, got {type(x).__name__} {x!r}")
    if isinstance(x, Decimal):
        d = x
    elif isinstance(x, Integral):
        return int(x) * FEN_PER_CNY
    else:
        f = float(x)
        if not math.isfinite(f):
            raise ValueError(f"an amount of money must be finite, got {f}")
        return _float_to_fen(f)
    if not d.is_finite():
        raise ValueError(f"an amount of money must be finite, got {d}")
    try:
        return int((d * FEN_PER_CNY).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    except InvalidOperation as exc:  # pragma: no cover - only for absurd exponents
        raise ValueError(f"amount {x!r} cannot be expressed in fen") from exc


@functools.lru_cache(maxsize=8192)
def _float_to_fen(f: float) -> int:
    """A finite float in CNY -> fen, half-up on its shortest repr (cached: agents repeat their prices)."""
    try:
        return int((Decimal(repr(f)) * FEN_PER_CNY).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    except InvalidOperation as exc:  # e.g. 1e300: more digits than the decimal context holds
        raise ValueError(f"amount {f!r} cannot be expressed in fen") from exc


# Below this many fen, n / 100 is already round(n / 100, 2): the division is correctly rounded, so it
# lies within half an ulp (< 0.005 CNY here) of the 2-decimal amount n / 100, which round() then picks
# and turns back into that same nearest float.
_EXACT_FEN = 2**50


def from_fen(fen: int) -> float:
    """Integer fen -> CNY float with 2 decimals (for records, reports and JSON)."""
    n = int(fen)
    if -_EXACT_FEN < n < _EXACT_FEN:
        return n / FEN_PER_CNY
    return round(n / FEN_PER_CNY, 2)


def band_fen(ref_fen: int, band: tuple[float, float]) -> tuple[int, int]:
    """Lowest and highest price in fen (inclusive) within `band` x the reference price `ref_fen`.

    The bounds are exact: lo = ceil(band[0] * ref), hi = floor(band[1] * ref), with the band factors
    read as written (e.g. 0.5, 2.0), so an integer price p is in band iff lo <= p <= hi.
    """
    lo = (Decimal(repr(float(band[0]))) * ref_fen).to_integral_value(rounding=ROUND_CEILING)
    hi = (Decimal(repr(float(band[1]))) * ref_fen).to_integral_value(rounding=ROUND_FLOOR)
    return int(lo), int(hi)

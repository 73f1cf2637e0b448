"""Canonical content: what the pipeline exports is rounded, written and hashed the same way on any machine.

Estimates come out of iterative fits run to fixed points far below the exported precision
(`autovend.calibration.solve`), and transcendental functions differ by an ulp between a CPU's SIMD
kernels (numpy dispatches exp, log and power to AVX-512, AVX2 or baseline code at run time) and with
the number of BLAS threads. Exported floats are therefore rounded to SIGNIFICANT_DIGITS significant
decimal digits: six digits sit four orders of magnitude below the statistical precision of any
estimate (standard errors of a percent or more) and about six above the run-to-run wobble of the
polished fits (measured at ~1e-13 relative), so a wobble moves an exported digit with probability
about 1e-7 per value. Rounding gives what CPython's correctly rounded decimal conversion gives, the same on
every platform: exact float operations where they settle the digits, that conversion elsewhere (a log10 of
the value, whose last bit depends on the CPU, only guesses the scale, and a wrong guess is detected).

Hashes are over values, not writer bytes: `frame_hash` digests each column's name, kind and values in
a fixed binary form, so a Parquet file rewritten by another pyarrow (other metadata, another
compressor build) has the same content hash. Nothing non-finite is exported: `canonical_frame` and
`canonical_json` refuse NaN and infinities unless a column or key is declared nullable, where a
missing value is written as null.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from autovend.errors import NonFiniteError

SIGNIFICANT_DIGITS = 6
ROUND_BLOCK = 1 << 18  # values rounded at a time by `round_array`


def round_sig(x: float, digits: int = SIGNIFICANT_DIGITS) -> float:
    """`x` rounded to `digits` significant decimal digits (NaN and infinities pass through)."""
    if not math.isfinite(x):
        return x
    return float(f"{x:.{digits - 1}e}")


def round_array(values: np.ndarray, digits: int = SIGNIFICANT_DIGITS) -> np.ndarray:
    """Float array rounded to `digits` significant digits, element by element (shape kept).

    The same values as `round_sig` of each element (zeros, whose sign is kept, and non-finite values pass
    through as they are). Most values take an exact arithmetic path (`_scaled_round`); the others, and every
    distinct value of them once, go through `round_sig`'s decimal conversion.
    """
    arr = np.asarray(values, dtype=np.float64)
    out = arr.reshape(-1).copy()
    spec = f".{digits - 1}e"
    for start in range(0, len(out), ROUND_BLOCK):  # in blocks: the memory taken beside the result stays small
        part = out[start : start + ROUND_BLOCK]  # a view: rounded in place
        todo = np.flatnonzero(np.isfinite(part) & (part != 0.0))
        if not len(todo):
            continue
        rounded, exact = _scaled_round(part[todo], digits)
        part[todo[exact]] = rounded[exact]
        rest = todo[~exact]
        if len(rest):
            distinct, where = np.unique(part[rest], return_inverse=True)
            part[rest] = np.array([float(format(v, spec)) for v in distinct.tolist()], dtype=np.float64)[where]
    return out.reshape(arr.shape)


_POW10 = np.array([float(f"1e{j}") for j in range(23)])  # 10**j, exact in binary for j <= 22


def _scaled_round(x: np.ndarray, digits: int) -> tuple[np.ndarray, np.ndarray]:
    """x rounded to `digits` significant digits where that is certain from exact float operations, and where.

    With y = |x| * 10**j scaled to `digits` digits before the point, N = rint(y) is the correctly rounded
    significand when y is safely inside [10**(digits-1), 10**digits) and safely away from a half: the one
    rounding in the scaling moves y by at most an ulp, far less than the margins. N / 10**j (or N * 10**-j)
    of two exact operands is then the correctly rounded float of the decimal N x 10**-j, the value
    `format` and `float` give. The scale's exponent is a guess from log10, which may be off by one on some
    CPU: a wrong guess puts y outside the range and the value on the slow path, so the result never depends
    on it. Values that are not certain (about 1 in 10^5 of them, and all of them beyond 15 digits) get False.
    """
    n = len(x)
    if digits > 15 or digits < 1:
        return np.zeros(n), np.zeros(n, dtype=bool)
    ax = np.abs(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        j = (digits - 1) - np.floor(np.log10(ax))
    usable = np.abs(j) <= 22
    jj = np.where(usable, j, 0).astype(np.int64)
    p = _POW10[np.abs(jj)]
    up = jj >= 0
    with np.errstate(over="ignore", under="ignore"):
        y = np.where(up, ax * p, ax / p)
        N = np.rint(y)
        margin = 4.0 * np.spacing(y) + 1e-9  # far above the scaling's rounding error
        low, high = float(10 ** (digits - 1)), float(10**digits)
        exact = usable & (y >= low + margin) & (y <= high - margin) & (np.abs(y - np.floor(y) - 0.5) > margin)
        r = np.where(up, N / p, N * p)
    return np.copysign(r, x), exact


def _is_float(series: pd.Series) -> bool:
    return pd.api.types.is_float_dtype(series.dtype)


def canonical_frame(
    frame: pd.DataFrame,
    *,
    nullable: Iterable[str] = (),
    rounded: Iterable[str] | None = None,
    digits: int = SIGNIFICANT_DIGITS,
    what: str = "table",
) -> pd.DataFrame:
    """A copy with float columns as float64 rounded to `digits` significant digits and a fresh RangeIndex.

    `rounded` limits the rounding to those columns (money in exact minor units, or values already on a
    decimal grid, stay as they are); every float column is checked. Raises NonFiniteError naming `what`,
    the column and the first row when a float column outside `nullable` holds NaN or an infinity, or when
    any float column holds an infinity.
    """
    allowed = set(nullable)
    to_round = None if rounded is None else set(rounded)
    out = frame.copy()  # one copy (reset_index(drop=True).copy() held two at once)
    out.index = pd.RangeIndex(len(out))
    for col in out.columns:
        if not _is_float(out[col]):
            continue
        values = out[col].to_numpy(dtype=np.float64)
        bad = np.isinf(values) if col in allowed else ~np.isfinite(values)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise NonFiniteError(
                f"{what}: column {col} has a non-finite value ({values[row]}) in row {row + 1}; "
                "the estimate is not identified by this source"
            )
        out[col] = round_array(values, digits) if to_round is None or col in to_round else values
    return out


def diagnostic_frame(frame: pd.DataFrame, digits: int = SIGNIFICANT_DIGITS) -> pd.DataFrame:
    """A copy with every float column rounded to `digits` significant digits, NaN and infinities kept.

    For diagnostics (figures, tables written beside the estimates): their unrounded values move in the last bits
    with numpy's SIMD kernels, and a figure or file drawn from them must not.
    """
    out = frame.copy()  # one copy (reset_index(drop=True).copy() held two at once)
    out.index = pd.RangeIndex(len(out))
    for col in out.columns:
        if _is_float(out[col]):
            out[col] = round_array(out[col].to_numpy(dtype=np.float64), digits)
    return out


def canonical_value(obj: Any, *, digits: int = SIGNIFICANT_DIGITS, path: str = "") -> Any:
    """Plain JSON data with floats rounded; NaN becomes None; infinities raise NonFiniteError."""
    if isinstance(obj, dict):
        return {
            str(k): canonical_value(v, digits=digits, path=f"{path}.{k}" if path else str(k)) for k, v in obj.items()
        }
    if isinstance(obj, (list, tuple)):
        return [canonical_value(v, digits=digits, path=f"{path}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        if math.isnan(x):
            return None
        if math.isinf(x):
            raise NonFiniteError(f"{path or 'value'} is infinite; the estimate is not identified by this source")
        return round_sig(x, digits)
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"{path or 'value'}: {type(obj).__name__} is not plain JSON data")


def json_bytes(obj: Any) -> bytes:
    """Indented JSON with sorted keys and a final newline (values written as given)."""
    return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def json_hash(obj: Any) -> str:
    """SHA-256 of the compact, key-sorted JSON of `obj` (already canonical)."""
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    """Parquet (zstd) without pandas or index metadata, so bytes depend on the values and the writer only."""
    table = pa.Table.from_pandas(frame.reset_index(drop=True), preserve_index=False).replace_schema_metadata(None)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    return bytes(sink.getvalue().to_pybytes())


def _column_bytes(series: pd.Series) -> tuple[str, bytes]:
    """A kind tag and the column's values in a fixed binary form."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bool", series.to_numpy(dtype=np.uint8).tobytes()
    if pd.api.types.is_integer_dtype(dtype):
        return "int", series.to_numpy(dtype="<i8").tobytes()
    if pd.api.types.is_float_dtype(dtype):
        values = series.to_numpy(dtype="<f8").copy()
        values[np.isnan(values)] = np.nan  # one NaN bit pattern
        return "float", values.tobytes()
    if pd.api.types.is_datetime64_any_dtype(dtype):
        seconds = series.to_numpy().astype("datetime64[s]").astype("<i8")
        return "datetime", seconds.tobytes()
    parts = []
    for v in series.tolist():
        if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
            parts.append(b"\xff")
        else:
            data = str(v).encode("utf-8")
            parts.append(len(data).to_bytes(8, "big") + data)
    return "str", b"".join(parts)


def frame_hash(frame: pd.DataFrame) -> str:
    """SHA-256 over the frame's values: per column its name, kind, length and values, in column order."""
    digest = hashlib.sha256()
    digest.update(f"rows={len(frame)};cols={len(frame.columns)}".encode())
    for col in frame.columns:
        kind, data = _column_bytes(frame[col])
        digest.update(f"\0{col}\0{kind}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()

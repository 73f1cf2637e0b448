"""Exact duplicate rows of a table as written, found without a Python object per cell.

A 64-bit key of each row's typed values rules out every row whose key is unique (copies as written have
equal typed values); only the few candidates left are compared exactly, as text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def count_duplicates(raw: pd.DataFrame, typed: pd.DataFrame | None = None) -> int:
    """Exact duplicate rows (all columns as written), counting copies beyond the first.

    Rows are compared exactly only where a 64-bit key of their values repeats (`_row_keys`): copies as
    written have equal typed values (`typed`, the parsed columns; default the text itself), so a row
    whose key is unique has no copy. At operator scale this holds a few bytes a row instead of the
    text's dictionary or a Python object per cell.
    """
    if raw.empty or raw.shape[1] == 0:
        return 0
    maybe = _repeated(_row_keys(raw if typed is None else typed))
    return int(raw[maybe].duplicated().sum()) if maybe.any() else 0


_MIX = np.uint64(0x9E3779B97F4A7C15)  # splitmix64's multiplier


def _row_keys(frame: pd.DataFrame) -> np.ndarray:
    """A uint64 per row, equal for rows with equal values (collisions only cost an exact comparison).

    Numbers and times enter by their bits; a text column by its codes (Arrow's dictionary encoding) if it
    repeats its values (judged on its first 10,000 rows), and not at all if nearly every value is new
    (an order id): the exact comparison of the few candidate rows covers it.
    """
    key = np.zeros(len(frame), dtype=np.uint64)
    sample = min(len(frame), 10_000)
    for name in frame.columns:
        column = frame[name]
        if pd.api.types.is_datetime64_any_dtype(column):
            bits = column.to_numpy().view(np.int64).astype(np.uint64)
        elif pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
            bits = column.to_numpy(dtype="float64", na_value=np.nan).view(np.uint64)
        elif column.iloc[:sample].nunique(dropna=False) <= sample // 2:
            bits = pd.factorize(column, use_na_sentinel=False)[0].astype(np.uint64)
        else:
            continue
        key ^= bits
        key *= _MIX
        key ^= key >> np.uint64(29)
        del bits
    return key


def _repeated(key: np.ndarray) -> np.ndarray:
    """Whether each key occurs more than once; in parts of about 2**20 keys (by key modulo the parts)."""
    parts = max(1, len(key) >> 20)
    if parts == 1:
        return pd.Series(key).duplicated(keep=False).to_numpy()
    out = np.zeros(len(key), dtype=bool)
    part = (key % np.uint64(parts)).astype(np.int32)
    for p in range(parts):
        rows = np.flatnonzero(part == p)
        out[rows] = pd.Series(key[rows]).duplicated(keep=False).to_numpy()
    return out

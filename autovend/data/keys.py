"""Per-row lookups by a text key (an id) that go through the keys' codes, not a Python string a row."""

from __future__ import annotations

import numpy as np
import pandas as pd


def by_key(keys: pd.Series, table: pd.Series, missing: float, dtype: type = np.float64) -> np.ndarray:
    """table[key] for each key, `missing` where the key is missing or not in the table.

    The keys are factorised first (Arrow's dictionary encoding for text) and the table is looked up once
    per distinct key: `Series.map` or `reindex` on text would make a Python object of every row.
    """
    codes, uniques = pd.factorize(keys)
    if len(uniques) == 0:
        return np.full(len(keys), missing, dtype=dtype)
    values = table.reindex(uniques).fillna(missing).to_numpy(dtype=dtype)
    return np.where(codes >= 0, values[np.maximum(codes, 0)], missing).astype(dtype, copy=False)

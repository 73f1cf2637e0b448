"""Duplicate rows as written: exact counts, whatever the row keys leave to the exact comparison."""

import numpy as np
import pandas as pd
import pytest

from autovend.data.duplicates import count_duplicates


def test_duplicate_rows_count_every_copy_beyond_the_first():
    raw = pd.DataFrame(
        {
            "order_id": ["a", "a", "a", "b", "c", "c", "d", ""],
            "qty": ["1", "1", "1", "2", "3", "3", "3", ""],
            "ts": ["x", "x", "x", "y", "z", "z", "w", ""],
        }
    )
    assert count_duplicates(raw) == 3  # two more copies of a, one more of c
    assert count_duplicates(raw.iloc[[0, 3, 4, 6]]) == 0
    assert count_duplicates(pd.concat([raw.iloc[[7]]] * 4)) == 3  # blank rows are rows too


def test_duplicate_rows_are_counted_exactly_whatever_the_row_keys_leave_to_the_exact_comparison():
    # six columns of 3,000 distinct values (ids: no column enters the key, every row is a candidate),
    # and rows equal in five columns of six must not be counted as copies
    rng = np.random.default_rng(7)
    n = 3000
    cols = {f"c{i}": [f"v{i}_{j}" for j in rng.permutation(n)] for i in range(6)}
    raw = pd.DataFrame(cols)
    near = raw.iloc[:50].copy()
    near["c5"] = [f"other{j}" for j in range(50)]
    copies = raw.iloc[[3, 3, 10, 2999]]
    table = pd.concat([raw, near, copies], ignore_index=True)
    assert count_duplicates(table) == 4
    assert count_duplicates(table) == int(table.duplicated().sum())


@pytest.mark.slow
def test_duplicate_rows_use_the_typed_values_only_to_rule_rows_out():
    raw = pd.DataFrame(
        {
            "order_id": ["a", "a", "b", "c", "c", "d"],
            "qty": ["1", "1", "1.0", "2", "2", "2"],
            "ts": ["2024-06-01T08:00", "2024-06-01T08:00", "2024-06-01T08:00", "x", "x", "x"],
        }
    )
    typed = pd.DataFrame(
        {
            "order_id": raw["order_id"].astype("str"),
            "qty": [1.0, 1.0, 1.0, 2.0, 2.0, 2.0],
            "ts": pd.to_datetime(["2024-06-01 08:00"] * 3 + [None] * 3),
        }
    )
    # rows 0-1 and 3-4 are copies as written; row 2 equals them once typed ("1.0"), and is not one
    assert count_duplicates(raw, typed) == 2 == count_duplicates(raw)
    # 2.1M rows: the keys are checked in parts, and a copy in a different part is impossible (same key)
    n = 2_100_000
    big = pd.DataFrame({"qty": np.arange(n, dtype=float), "ts": np.zeros(n)})
    big.loc[[5, 1_999_999], "qty"] = 7.0
    assert count_duplicates(big.astype("str"), big) == 2

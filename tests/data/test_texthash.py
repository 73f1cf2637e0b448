"""Hashes of many strings at once (`texthash`): a function of each string's bytes alone."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from autovend.data.texthash import text_hashes


def test_a_strings_hash_depends_on_its_bytes_alone_whatever_holds_it():
    words = ["", "a", "ab", "abcdefgh", "abcdefghi", "é", "abcdefgh\x00", "ORD-000001", "x" * 41]
    want = text_hashes(words)
    assert want.shape == (len(words), 2) and want.dtype == np.uint64
    np.testing.assert_array_equal(text_hashes(np.array(words, dtype=object)), want)
    np.testing.assert_array_equal(text_hashes(pd.Series(words, dtype="string[pyarrow]")), want)
    np.testing.assert_array_equal(text_hashes(pd.Index(words)), want)
    np.testing.assert_array_equal(text_hashes(pa.chunked_array([words[:4], words[4:]])), want)
    np.testing.assert_array_equal(text_hashes(pa.array(["z", *words]).slice(1)), want)  # an Arrow slice's offset
    np.testing.assert_array_equal(text_hashes(words[::-1]), want[::-1])  # one string's hash ignores the others
    # the same values on any machine and in any process (no salt): compared across files and workers
    assert want[7].tolist() == [13824322379830303081, 8448839365314118726]
    assert text_hashes(words, seeds=(7,)).shape == (len(words), 1)
    assert text_hashes([]).shape == (0, 2)


def test_strings_that_differ_anywhere_hash_apart():
    rng = np.random.default_rng(0)
    base = [f"ORD-{i:07d}" for i in range(200_000)]
    near = [s[:-1] + chr(ord(s[-1]) + 1) for s in base[:1000]]  # one byte apart
    longer = [s + "\x00" for s in base[:1000]]  # a trailing NUL: another length
    random = ["".join(rng.choice(list("abc"), rng.integers(0, 12))) for _ in range(3000)]
    values = list(dict.fromkeys(base + near + longer + random))  # distinct strings
    h = text_hashes(values)
    assert len(np.unique(h[:, 0])) == len(values) and len(np.unique(h[:, 1])) == len(values)
    top = (h[:, 0] >> np.uint64(60)).astype(int)  # the check's 16 ranges get a sixteenth each
    assert np.bincount(top, minlength=16).min() > len(values) / 16 * 0.9


def test_missing_values_are_refused():
    with pytest.raises(ValueError, match="missing"):
        text_hashes(pa.array(["a", None]))

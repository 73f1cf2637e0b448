"""Content hashes over values: text is framed (length-prefixed), so values cannot slide between cells."""

from __future__ import annotations

import numpy as np
import pandas as pd

from autovend.canonical import diagnostic_frame, frame_hash, round_array


def test_text_cells_are_framed_so_their_boundaries_count():
    assert frame_hash(pd.DataFrame({"a": ["ab", "c"]})) != frame_hash(pd.DataFrame({"a": ["a", "bc"]}))
    assert frame_hash(pd.DataFrame({"a": ["", "x"]})) != frame_hash(pd.DataFrame({"a": ["x", ""]}))
    # a missing value is not the empty string, nor the text "None"
    hashes = {frame_hash(pd.DataFrame({"a": [v, "x"]}, dtype=object)) for v in (None, "", "None")}
    assert len(hashes) == 3
    # a column's name is framed too: moving a character from the name into the value changes the hash
    assert frame_hash(pd.DataFrame({"ab": ["c"]})) != frame_hash(pd.DataFrame({"a": ["bc"]}))


def test_the_hash_is_of_values_not_of_dtypes_or_index():
    a = pd.DataFrame({"x": [1.5, 2.5]}, index=[7, 9])
    b = pd.DataFrame({"x": np.array([1.5, 2.5], dtype=np.float64)})
    assert frame_hash(a) == frame_hash(b)
    assert frame_hash(a) != frame_hash(pd.DataFrame({"x": [2.5, 1.5]}))


def test_diagnostics_are_rounded_and_keep_their_non_finite_values():
    frame = pd.DataFrame({"r": [1.2345678901, np.inf, np.nan], "n": [1, 2, 3]})
    out = diagnostic_frame(frame)
    assert out["r"].iloc[0] == 1.23457 and np.isinf(out["r"].iloc[1]) and np.isnan(out["r"].iloc[2])
    assert out["n"].tolist() == [1, 2, 3]
    # one ulp either way rounds to the same value (what makes a figure the same on every CPU)
    x = np.array([0.123456789])
    assert round_array(np.nextafter(x, 1)) == round_array(np.nextafter(x, 0)) == round_array(x)

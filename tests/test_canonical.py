"""Content hashes over values: text is framed (length-prefixed), so values cannot slide between cells."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

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


def test_round_array_is_round_sig_of_each_element_bit_for_bit():
    from autovend.canonical import round_sig

    rng = np.random.default_rng(3)
    values = np.concatenate(
        [
            rng.lognormal(0.0, 4.0, 5000),
            -rng.random(500),
            np.repeat(rng.random(50), 20),  # repeated values are rounded once
            [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, 1.7976931348623157e308, 9.999995e-7, 0.1234565],
        ]
    ).reshape(-1, 10)
    want = np.array([round_sig(v) for v in values.ravel().tolist()]).reshape(values.shape)
    got = round_array(values)
    assert got.shape == values.shape and got.tobytes() == want.tobytes()  # signed zeros and NaN bits kept
    assert round_array(np.zeros(0)).shape == (0,)


@pytest.mark.parametrize("digits", [1, 3, 6, 10, 15, 17])
def test_round_array_matches_the_decimal_conversion_near_halves_and_powers_of_ten(digits):
    from autovend.canonical import round_sig

    rng = np.random.default_rng(digits)
    scale = 10.0 ** rng.integers(-12, 12, 3000)
    values = np.concatenate(
        [
            (rng.integers(10 ** (digits - 1), 10**digits, 3000) + 0.5) / 10**digits * scale,  # decimal halves
            10.0 ** rng.integers(-25, 25, 500),  # powers of ten, and one ulp either side
            np.nextafter(10.0 ** rng.integers(-25, 25, 500), 0),
            np.nextafter(10.0 ** rng.integers(-25, 25, 500), np.inf),
            -rng.lognormal(0.0, 10.0, 3000),
        ]
    )
    want = np.array([round_sig(v, digits) for v in values.tolist()])
    assert round_array(values, digits).tobytes() == want.tobytes()


def test_round_array_does_not_depend_on_the_last_bit_of_log10(monkeypatch):
    """The scale's exponent is a guess: a log10 that is off (by an ulp, or by a whole unit) changes no value."""
    from autovend.canonical import round_sig

    values = np.random.default_rng(5).lognormal(0.0, 6.0, 4000)
    want = np.array([round_sig(v) for v in values.tolist()])
    real = np.log10
    for shift in (-1.0, 1.0, 1e-12):
        monkeypatch.setattr(np, "log10", lambda x, shift=shift: real(x) + shift)
        assert round_array(values).tobytes() == want.tobytes()

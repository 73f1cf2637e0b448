import numpy as np
import pandas as pd

from autovend.data.keys import by_key


def test_lookup_by_key_gives_the_missing_value_for_unknown_and_missing_keys():
    ref = pd.Series([2.5, 4.0], index=pd.Index(["A", "B"], dtype="str"))
    keys = pd.Series(["B", "A", "Z", None, "B"], dtype="str")
    got = by_key(keys, ref, np.nan)
    assert got[[0, 1, 4]].tolist() == [4.0, 2.5, 4.0] and np.isnan(got[[2, 3]]).all()
    assert np.isnan(by_key(pd.Series([None], dtype="str"), ref, np.nan)).all()
    assert by_key(pd.Series([], dtype="str"), ref, np.nan).shape == (0,)


def test_lookup_by_key_returns_integer_codes_with_their_own_missing_value():
    code_of = pd.Series([0, 1, 2], index=pd.Index(["m1", "m2", "m3"], dtype="str"))
    got = by_key(pd.Series(["m3", "x", "m1", "m3", None], dtype="str"), code_of, -1, np.int64)
    assert got.dtype == np.int64 and got.tolist() == [2, -1, 0, 2, -1]
    assert by_key(pd.Series([None, None], dtype="str"), code_of, -1, np.int64).tolist() == [-1, -1]

from decimal import Decimal

import numpy as np
import pytest

from autovend.sim.money import band_fen, from_fen, to_fen


@pytest.mark.parametrize(
    ("amount", "fen"),
    [
        pytest.param(2.675, 268, id="float-half-up-on-written-digits"),
        pytest.param(1.005, 101, id="float-1.005"),
        pytest.param(0.005, 1, id="half-fen"),
        pytest.param(0.004999, 0, id="below-half"),
        pytest.param(-2.675, -268, id="negative-away-from-zero"),
        pytest.param(40_000, 4_000_000, id="int"),
        pytest.param(0.03, 3, id="rent"),
        pytest.param(Decimal("3.145"), 315, id="decimal"),
        pytest.param(np.float64(4.5), 450, id="numpy-float"),
        pytest.param(np.int64(7), 700, id="numpy-int"),
    ],
)
def test_to_fen_rounds_half_up(amount, fen):
    assert to_fen(amount) == fen


@pytest.mark.parametrize("bad", [True, "3.5", None, [1], float("nan"), float("inf"), Decimal("NaN")])
def test_to_fen_refuses_non_amounts(bad):
    with pytest.raises((TypeError, ValueError)):
        to_fen(bad)


def test_to_fen_of_a_float_is_the_same_on_every_call_and_refuses_amounts_beyond_fen():
    # floats go through a cache: repeated and equal amounts give the same fen, a bool is still refused
    assert [to_fen(2.675), to_fen(2.675), to_fen(np.float64(2.675)), to_fen(1.005)] == [268, 268, 268, 101]
    with pytest.raises(TypeError):
        to_fen(True)
    with pytest.raises(ValueError, match="cannot be expressed in fen"):
        to_fen(1e300)  # 303 digits: more than the decimal context holds


def test_from_fen_gives_cny_with_two_decimals():
    assert from_fen(3_992_000) == 39_920.0
    assert from_fen(-1) == -0.01
    assert from_fen(268) == 2.68


def test_from_fen_is_the_amount_rounded_to_two_decimals_at_any_size():
    rng = np.random.default_rng(7)
    small = range(-100_000, 100_001)
    large = rng.integers(-(2**50), 2**50, 200_000).tolist()
    edges = [2**50 - 1, 2**50, 2**50 + 1, -(2**50), 10**17 + 1, -(10**17) - 3, 2**63 - 1]
    for n in [*small, *large, *edges]:
        got = from_fen(n)
        assert type(got) is float and repr(got) == repr(round(n / 100, 2)), n
    assert from_fen(np.int64(-250)) == -2.5 and from_fen(10**17 + 1) == 1e15


@pytest.mark.parametrize(
    ("ref", "lo", "hi"),
    [
        pytest.param(300, 150, 600, id="even"),
        pytest.param(333, 167, 666, id="odd-lower-bound-rounds-up"),
        pytest.param(1, 1, 2, id="one-fen"),
    ],
)
def test_band_is_exact_and_inclusive(ref, lo, hi):
    assert band_fen(ref, (0.5, 2.0)) == (lo, hi)

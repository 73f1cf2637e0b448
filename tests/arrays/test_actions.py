"""The slots' asked prices (`actions._prices`, compiled) are `price_fen`'s, checked against the band, to the fen."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from autovend.arrays.actions import CODE, _prices, price_fen


def _numpy_prices(ref, lo, hi, product, mult):
    """The numpy form the compiled pass replaced."""
    held = product >= 0
    finite = np.isfinite(mult)
    code = np.zeros(product.shape, dtype=np.int8)
    code[held & ~finite] = CODE["invalid_price"]
    k = np.where(held, product, 0)
    fen = price_fen(ref[k], mult)
    in_band = (fen >= lo[k]) & (fen <= hi[k])
    code[held & finite & ~in_band] = CODE["price_out_of_band"]
    out = np.full(product.shape, -1, dtype=np.int64)
    ok = held & finite & in_band
    out[ok] = fen[ok]
    return out, code


@pytest.mark.parametrize("seed", range(4))
def test_the_compiled_prices_are_numpys(seed):
    rng = np.random.default_rng(seed)
    K, shape = 50, (3, 4, 16)
    ref = rng.integers(100, 2000, K)
    lo, hi = (ref * 0.5).astype(np.int64), (ref * 1.5).astype(np.int64)
    facts = SimpleNamespace(ref_fen=ref, lo_fen=lo, hi_fen=hi)
    product = rng.integers(-1, K, shape).astype(np.int32)
    k = np.maximum(product, 0)
    half = (np.floor(ref[k] * 0.9) + 0.5) / ref[k]  # multipliers that land on half a fen (and float noise)
    mult = np.select(
        [rng.random(shape) < 0.25, rng.random(shape) < 0.1, rng.random(shape) < 0.1],
        [half + rng.choice([-1e-12, 0.0, 1e-12], shape), rng.choice([np.nan, np.inf, -np.inf], shape),
         rng.choice([-3.0, 0.0, 1e20, 2.0], shape)],
        rng.uniform(0.3, 1.8, shape),
    )  # fmt: skip
    state = SimpleNamespace()
    got = _prices(facts, state, {"slot_price": mult}, product)
    want = _numpy_prices(ref, lo, hi, product, mult)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    assert (want[1] == CODE["invalid_price"]).any() and (want[1] == CODE["price_out_of_band"]).any()
    assert (want[0] > 0).sum() > 50


def test_no_prices_asked_leaves_every_slot_unpriced():
    facts = SimpleNamespace(ref_fen=np.array([100]), lo_fen=np.array([50]), hi_fen=np.array([150]))
    out, code = _prices(facts, SimpleNamespace(), {}, np.zeros((1, 1, 2), dtype=np.int32))
    assert out.tolist() == [[[-1, -1]]] and not code.any()

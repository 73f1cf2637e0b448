"""`cell_uniforms` gives numpy's own draws of `stream(seed, *key)` at the cells asked for, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autovend.arrays.uniforms import cell_uniforms, entropy_words
from autovend.rng import _key_int, key_words, stream

M, K = 20, 1400  # the simulator's matrix of a cn20 day


def numpy_draws(seeds: np.ndarray, key: tuple, run: np.ndarray, pos: np.ndarray, size: int) -> np.ndarray:
    rows = {int(r): stream(int(seeds[r]), *key).random(size) for r in np.unique(run)}
    return np.array([rows[int(r)][int(p)] for r, p in zip(run, pos, strict=True)])


def test_the_stocked_cells_of_a_day_are_the_simulators_draws():
    rng = np.random.default_rng(11)
    seeds = np.array([0, 1, 2, 7, 999, 2**31 - 1], dtype=np.int64)
    for day in (0, 1, 2, 90, 180):
        run = rng.integers(0, len(seeds), 2_000)
        pos = rng.integers(0, M * K, 2_000)
        pos[:4] = [0, 1, M * K - 1, M * K - 1]  # the ends of the matrix; a place asked for twice
        got = cell_uniforms(seeds, ("demand", day), run, pos)
        ref = np.array(
            [stream(int(seeds[r]), "demand", day).random((M, K)).ravel()[p] for r, p in zip(run, pos, strict=True)]
        )
        assert got.dtype == np.float64
        np.testing.assert_array_equal(got, ref)


@settings(max_examples=60, deadline=None)
@given(
    seeds=st.lists(st.integers(0, 2**63 - 1), min_size=1, max_size=4),
    key=st.tuples(st.sampled_from(["demand", "lead_time", "x"]), st.integers(0, 2**40)),
    cells=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 5_000)), min_size=0, max_size=40),
)
def test_any_seed_key_and_places_match_numpy(seeds, key, cells):
    seeds_a = np.array(seeds, dtype=np.int64)
    run = np.array([r % len(seeds) for r, _ in cells], dtype=np.int64)
    pos = np.array([p for _, p in cells], dtype=np.int64)
    got = cell_uniforms(seeds_a, key, run, pos)
    np.testing.assert_array_equal(got, numpy_draws(seeds_a, key, run, pos, 5_001))


def test_seeds_of_more_than_one_word_hash_as_numpy_hashes_them():
    seeds = np.array([2**32, 2**32 + 5, 3, 2**62 + 12345], dtype=np.int64)
    words, n = entropy_words(seeds, ("demand", 4))
    assert n.tolist() == [5, 5, 4, 5]  # a wide seed is two words, then len(key), the name's hash, the day
    for i, s in enumerate(seeds.tolist()):
        assert words[i, : n[i]].tolist() == key_words(s, ("demand", 4))
    run = np.repeat(np.arange(4), 3)
    pos = np.tile([0, 17, 4_999], 4)
    np.testing.assert_array_equal(
        cell_uniforms(seeds, ("demand", 4), run, pos), numpy_draws(seeds, ("demand", 4), run, pos, 5_000)
    )


def test_no_cells_and_places_out_of_range():
    seeds = np.array([1, 2], dtype=np.int64)
    assert cell_uniforms(seeds, ("demand", 1), np.zeros(0, np.int64), np.zeros(0, np.int64)).shape == (0,)
    with pytest.raises(ValueError, match="place in its draw"):
        cell_uniforms(seeds, ("demand", 1), np.array([0]), np.array([-1]))


def test_key_words_are_the_entropy_numpy_hashes():
    for seed, key in [(0, ("demand", 0)), (5, ("demand", 180)), (2**40 + 1, ("lead_time", 2**33)), (9, ("shock",))]:
        entropy = [seed, len(key), *(_key_int(p) for p in key)]  # what `stream` hands SeedSequence
        want = np.random.SeedSequence(entropy).pool
        np.testing.assert_array_equal(np.random.SeedSequence(key_words(seed, key)).pool, want)

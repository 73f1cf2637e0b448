"""The compiled shelf targets: the baseline's targets on every branch, and a cache that loads in a new process."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from autovend.agents.array_baseline.rows import list_order, shelf_targets
from autovend.agents.baseline.targets import shelf_targets as b_shelf_targets


def _rows(rng: np.random.Generator, R: int, S: int, facing: int):
    valid = rng.random((R, S)) < rng.uniform(0.05, 1.0, (R, 1))
    keys = np.stack([rng.permutation(10 * S)[:S] for _ in range(R)])
    pos, _ = list_order(keys, valid)
    need = rng.exponential(rng.uniform(0.5, 40, (R, 1)), (R, S))
    rate = np.round(rng.exponential(rng.uniform(0.1, 5, (R, 1)), (R, S)), int(rng.integers(0, 4)))
    rate[rng.random((R, S)) < 0.15] = 0.0
    rate[rng.random((R, S)) < 0.01] = np.nan  # ranked last, as numpy's lexsort puts it, and never given room
    limit = np.floor(rng.exponential(rng.uniform(2, 60, (R, 1)), (R, S)))
    room = rng.integers(-5, 30 * S, R)
    tight = rng.random(R) < 0.1  # not even the facings fit
    room[tight] = rng.integers(1, valid[tight].sum(axis=1) * facing + 2)
    room[rng.random(R) < 0.03] = 0
    fill = rng.random(R) < 0.8
    return valid, keys, pos, need, rate, limit, room, fill


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("S,facing", [(64, 5), (12, 3), (40, 1)])
def test_every_rows_targets_are_the_baselines_on_every_branch(seed, S, facing):
    rng = np.random.default_rng(100 * seed + S)
    R = 300
    valid, keys, pos, need, rate, limit, room, fill = _rows(rng, R, S, facing)
    got = shelf_targets(need, rate, limit, valid, pos, room, facing, fill)
    n = valid.sum(axis=1)
    branches = {"empty": 0, "facings": 0, "scaled": 0, "shared": 0, "unfilled": 0}
    for i in range(R):
        ks = np.argsort(np.where(valid[i], keys[i], 10**9), kind="stable")[: n[i]]  # the list in its order
        want = b_shelf_targets(need[i, ks], rate[i, ks], limit[i, ks], int(room[i]), facing, bool(fill[i]))
        assert np.array_equal(got[i, ks], want), i
        assert not got[i][~valid[i]].any()
        first = np.minimum(np.maximum(np.ceil(need[i, ks] - 1e-9), facing), np.maximum(limit[i, ks], facing))
        if n[i] == 0 or room[i] <= 0:
            branches["empty"] += 1
        elif n[i] * facing >= room[i]:
            branches["facings"] += 1
            assert got[i].sum() == room[i]
        elif first.sum() > room[i]:
            branches["scaled"] += 1
            assert got[i].sum() == room[i]
        elif fill[i] and first.sum() < room[i]:
            branches["shared"] += 1
            assert (got[i, ks] >= first).all()
        else:
            branches["unfilled"] += 1
            assert np.array_equal(got[i, ks], first)
    assert min(branches.values()) >= 3, branches  # the rows reach every rule


def test_the_spare_room_goes_by_rate_then_unit_by_unit_to_the_fastest():
    # two products under a room of 20 at facing 5: 5 each, 10 spare shared 1:3 (2 and 7 after flooring, 1 left
    # for a second pass); caps of 99 do not bind
    valid = np.ones((1, 2), dtype=bool)
    pos = np.array([[0, 1]])
    got = shelf_targets(
        np.array([[2.0, 2.0]]),
        np.array([[1.0, 3.0]]),
        np.full((1, 2), 99.0),
        valid,
        pos,
        np.array([20]),
        5,
        np.array([True]),
    )
    assert got.tolist() == [[7, 13]]
    # three equal rates and 2 spare units: floor(2/3) = 0 each, so one unit each to the fastest (the list's first)
    valid = np.ones((1, 3), dtype=bool)
    pos = np.array([[0, 1, 2]])
    rate = np.array([[1.0, 1.0, 1.0]])
    got = shelf_targets(
        np.full((1, 3), 5.0),
        rate,
        np.full((1, 3), 99.0),
        valid,
        pos,
        np.array([17]),
        5,
        np.array([True]),
    )
    assert got.tolist() == [[6, 6, 5]]


def test_the_kernels_load_from_numbas_cache_in_a_new_process(tmp_path):
    # the first process compiles and writes numba's cache, the second loads it (a recursive kernel would crash
    # there); both must give the baseline's targets
    code = (
        "import numpy as np\n"
        "from autovend.agents.array_baseline.rows import list_pos, shelf_targets\n"
        "from autovend.arrays.pairwise import pairwise_sum\n"
        "valid = np.ones((1, 3), dtype=bool)\n"
        "got = shelf_targets(np.array([[12.0, 4.0, 20.0]]), np.array([[2.0, 1.0, 3.0]]), np.full((1, 3), 99.0),\n"
        "                    valid, list_pos(np.arange(3)[None, :], valid), np.array([30]), 5, np.array([True]))\n"
        "x = np.arange(1000) * 0.1\n"
        "print(got.tolist(), pairwise_sum(x, 0, 1000) == np.sum(x))\n"
    )
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    want = b_shelf_targets([12.0, 4.0, 20.0], [2.0, 1.0, 3.0], [99, 99, 99], room=30, facing=5).tolist()
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.strip() == f"[{want}] True"
    assert any(tmp_path.rglob("*.nbc"))  # the second process had a cache to load


@pytest.mark.parametrize("bad", [[0, 2, 5], [0, 0, 1], [-1, 0, 1], [1, 2, 3]])
def test_list_places_that_are_not_a_rows_order_are_refused(bad):
    valid = np.array([[True, True, True, False, False, False]])
    pos = np.array([bad + [7, 7, 7]])
    args = (np.ones((1, 6)), np.ones((1, 6)), np.full((1, 6), 9.0), valid, pos, np.array([20]), 5, np.array([True]))
    with pytest.raises(ValueError, match="list places"):
        shelf_targets(*args)
    pos[0, :3] = [2, 0, 1]  # a permutation is fine
    assert shelf_targets(*args).sum() == 20

"""A block's spill (`blocks.Spill`): arrays kept on disk and mapped back."""

from __future__ import annotations

import numpy as np

from autovend.calibration.blocks import Spill


def test_a_spilled_array_comes_back_with_its_values_and_dtype():
    spill = Spill()
    for name, value in {
        "a": np.linspace(0.0, 1.0, 7),
        "k": np.arange(5, dtype=np.int32),
        "c": np.array([True, False]),
    }.items():
        spill.put(name, value)
        back = spill.get(name)
        assert type(back) is np.ndarray  # a plain array (numba's kernels and np.bincount take it as any other)
        assert back.dtype == value.dtype
        np.testing.assert_array_equal(back, value)
    spill.put("empty", np.zeros(0))
    assert spill.get("empty").shape == (0,)
    assert spill.get("missing") is None


def test_a_mapped_array_keeps_its_values_when_a_new_one_is_put_and_writes_stay_in_the_process():
    spill = Spill()
    spill.put("dhat", np.array([1.0, 2.0, 3.0]))
    old = spill.get("dhat")
    spill.put("dhat", np.array([4.0, 5.0]))  # a new file renamed over the old one: the old mapping stays whole
    np.testing.assert_array_equal(old, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(spill.get("dhat"), [4.0, 5.0])
    back = spill.get("dhat")
    back[0] = -1.0  # copy-on-write: the file keeps its value
    np.testing.assert_array_equal(spill.get("dhat"), [4.0, 5.0])
    spill.put("dhat", None)
    assert spill.get("dhat") is None
    assert sorted(p.name for p in spill.folder.iterdir()) == []  # nothing left aside


def test_a_workers_budget_for_cells_leaves_room_for_the_compiled_passes(monkeypatch):
    import types

    import distributed

    from autovend.calibration import blocks

    def worker(limit):
        return lambda: types.SimpleNamespace(memory_manager=types.SimpleNamespace(memory_limit=limit))

    assert blocks.spill_budget() == float("inf")  # not on a worker: no budget
    monkeypatch.setattr(distributed, "get_worker", worker(2 << 30))
    assert blocks.spill_budget() == 0.4 * (2 << 30) - (160 << 20)  # 659 MiB of a 2 GiB worker's 819
    monkeypatch.setattr(distributed, "get_worker", worker(256 << 20))
    assert blocks.spill_budget() == 0.0  # a small worker spills every block
    monkeypatch.setattr(distributed, "get_worker", worker(None))
    assert blocks.spill_budget() == float("inf")  # --memory-limit 0: none

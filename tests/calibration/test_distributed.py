"""The calibration's statistics computed per block of machines, wherever the blocks are held: the same bytes.

The blocks (`autovend.calibration.store`) are set by the records alone; their parts are summed in block order.
So a calibration in this process, on groups of blocks (here in turn, or on a Dask cluster's workers), from a
flat source or from its partitioned copy, writes the same calibration.json (the partitioned copy's source hash
aside). `BLOCK_ROWS` is lowered so that a small source has several blocks, as an operator-scale one has.
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from autovend.calibration import blocks, cells, split, store
from autovend.calibration.assemble import from_parts, on_executor
from autovend.calibration.calibrate import blocks_on, calibrate
from autovend.calibration.config import CalibrationConfig
from autovend.data.load import load_source
from autovend.data.parts import locate
from autovend.data.partwrite import partition_source
from autovend.parallel import LocalExecutor
from tests.calibration.conftest import small_source

SMALL_BLOCK = 300  # sales and count rows per block: the small source below has 4 (its machines have 943, 242, 395, 137)


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    """Four machines (two with inventory records), 42 days, about 1,500 units: its folder."""
    folder = tmp_path_factory.mktemp("blocks")
    small_source(folder, {"worksite/canteen": 2, "office/office_building": 2}, 2, 42, 1_500)
    return folder / "src"


def _written(result, out: Path) -> bytes:
    result.write(out)
    return (out / "calibration.json").read_bytes()


@pytest.mark.parametrize("compiled", [False, True], ids=["numpy-e-step", "compiled-e-step"])
def test_blocks_held_in_groups_give_the_bytes_of_the_panel_in_memory(small, tmp_path, monkeypatch, compiled):
    monkeypatch.setattr(cells, "BLOCK_ROWS", SMALL_BLOCK)
    if compiled:  # the E-step's tails compiled (`tail_kernels`), as for a split with many sold-out cells
        monkeypatch.setattr(split, "COMPILED_FROM_CENSORED", 0)
    source = load_source(small)
    whole = calibrate(source, CalibrationConfig())
    assert whole.estimates.n_machines == 4
    reference = _written(whole, tmp_path / "memory")
    grouped = calibrate(on_executor(source, CalibrationConfig(), LocalExecutor(3)), CalibrationConfig())
    assert _written(grouped, tmp_path / "groups") == reference
    monkeypatch.setattr(store, "GROUP_BLOCKS", 1)  # groups of one block each: 4 groups held by 1 worker
    assert store.held_layout([943, 242, 395, 137], 1) == [[0], [1], [2], [3]]
    bounded = calibrate(on_executor(source, CalibrationConfig(), LocalExecutor(1)), CalibrationConfig())
    assert _written(bounded, tmp_path / "bounded") == reference
    monkeypatch.setattr(store, "GROUP_BLOCKS", 4)
    monkeypatch.setattr(blocks, "spill_budget", lambda: 0.0)  # a worker whose memory holds no block: all on disk
    spilled = calibrate(on_executor(source, CalibrationConfig(), LocalExecutor(2)), CalibrationConfig())
    assert _written(spilled, tmp_path / "spilled") == reference
    del whole, grouped, bounded, spilled
    gc.collect()
    assert blocks._HELD["bytes"] == 0  # every block's memory given back (when released, or else when collected)


@pytest.mark.slow
def test_a_calibration_inside_blocks_on_holds_its_blocks_there(small, tmp_path, monkeypatch):
    monkeypatch.setattr(cells, "BLOCK_ROWS", SMALL_BLOCK)
    source = load_source(small)
    reference = _written(calibrate(source, CalibrationConfig()), tmp_path / "memory")
    with blocks_on(LocalExecutor(2)):  # what validation's calibrations do on a cluster
        assert _written(calibrate(source, CalibrationConfig()), tmp_path / "context") == reference


def test_held_groups_stay_within_their_rows_whatever_the_machines(monkeypatch):
    monkeypatch.setattr(cells, "BLOCK_ROWS", 100)
    assert store.held_layout([100] * 6, 2) == [[0, 1, 2], [3, 4, 5]]  # 600 rows: two groups of at most 400
    layout = store.held_layout([100] * 40, 2)  # 4,000 rows: ten groups of 4 blocks, five a worker
    assert [len(g) for g in layout] == [4] * 10
    assert [b for g in layout for b in g] == list(range(40))  # consecutive, in block order
    assert store.held_layout([100, 0, 100], 3) == [[0], [1], [2]]


def test_the_panel_has_the_blocks_it_was_built_in(small, monkeypatch):
    from autovend.calibration.panel import build_panel

    monkeypatch.setattr(cells, "BLOCK_ROWS", SMALL_BLOCK)
    panel = build_panel(load_source(small), CalibrationConfig())
    assert len(panel.blocks) == 4
    assert [lo for lo, _ in panel.blocks] == [0, 1, 2, 3]  # one machine each: no two neighbours hold 300 rows
    assert panel.blocks[-1][1] == panel.n_machines


@pytest.mark.slow
def test_a_partitioned_copy_calibrates_to_the_same_estimates(small, tmp_path, monkeypatch):
    monkeypatch.setattr(cells, "BLOCK_ROWS", SMALL_BLOCK)
    reference = json.loads(_written(calibrate(load_source(small), CalibrationConfig()), tmp_path / "flat"))
    for by in (("machine_id",), ("month",)):
        parts = tmp_path / f"parts-{'-'.join(by)}"
        partition_source(small, parts, by)
        prepared = from_parts(locate(parts), None, CalibrationConfig(), LocalExecutor(2))
        got = json.loads(_written(calibrate(prepared, CalibrationConfig()), tmp_path / f"cal-{'-'.join(by)}"))
        assert got["source_hash"] != reference["source_hash"]
        differ = {k for k in reference if reference[k] != got.get(k)}
        assert differ == {"source_hash", "content_hash"}, {k: (reference[k], got.get(k)) for k in differ}

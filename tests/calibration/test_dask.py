"""The embedded operator calibrated on Dask: a local cluster, and a scheduler with two workers started by hand.

calibration.json must be the same bytes as in this process (`autovend calibrate` without --scheduler), with the
panel cut into several blocks of machines (`BLOCK_ROWS` lowered: the operator's 99 machines in 8 blocks), from
the flat source and from its copy partitioned by month (read one partition file per task on the workers).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autovend.calibration import cells
from autovend.data.partwrite import partition_source
from autovend.pipeline.calibrate import run
from tests.conftest import PARAMS, SETTINGS
from tests.sweep.conftest import DaskCluster

pytestmark = pytest.mark.slow  # clusters of worker processes, and the full synthetic operator
BLOCK = 1 << 15  # sales and count rows per block: 8 blocks of the embedded operator's 99 machines


def _json(source: Path | str, out: Path, **where) -> bytes:
    res, _ = run(source, out, PARAMS, SETTINGS, **where)
    assert res.estimates.n_machines == 99
    return (out / "calibration.json").read_bytes()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    made = DaskCluster(tmp_path_factory.mktemp("dask")).start(2)
    try:
        yield made
    finally:
        made.close()


def test_the_embedded_operator_on_dask_is_the_same_bytes(synthetic_dirs, cluster, tmp_path, monkeypatch):
    monkeypatch.setattr(cells, "BLOCK_ROWS", BLOCK)
    source = synthetic_dirs[0]
    said: list[str] = []
    here = _json(source, tmp_path / "here")
    assert _json(source, tmp_path / "local", scheduler="local", workers=2, announce=said.append) == here
    assert _json(source, tmp_path / "external", scheduler=cluster.address, workers=2, announce=said.append) == here
    assert said[0].startswith("local cluster: 2 workers, 2 threads; dashboard http://")
    assert said[1].startswith(f"scheduler {cluster.address}: 2 workers, 2 threads")
    panel = "diagnostics/panel.parquet"  # each block's rows made and rounded on its worker, the next one meanwhile
    assert (tmp_path / "external" / panel).read_bytes() == (tmp_path / "here" / panel).read_bytes()
    parts = tmp_path / "by-month"
    partition_source(source, parts, ("month",))
    parted = _json(parts, tmp_path / "parts-here")
    assert _json(f"file://{parts}", tmp_path / "parts-external", scheduler=cluster.address, workers=2) == parted
    assert parted.replace(b"\n", b"") != here.replace(b"\n", b"")  # its source hash is the partitioned files'


def test_a_sales_only_source_on_dask_is_the_same_bytes(synthetic_dirs, tmp_path, monkeypatch):
    monkeypatch.setattr(cells, "BLOCK_ROWS", BLOCK)
    source = tmp_path / "sales-only"
    source.mkdir()
    for f in synthetic_dirs[0].iterdir():
        if f.is_file() and f.name != "inventory.csv" and not f.name.startswith("."):
            shutil.copyfile(f, source / f.name)
    here = _json(source, tmp_path / "here")
    assert _json(source, tmp_path / "local", scheduler="local", workers=2) == here

"""Where the calibrate and validate stages compute: --scheduler and --workers, or the params file's `cluster`."""

from __future__ import annotations

import pytest
import yaml

from autovend import parallel
from autovend.errors import ConfigError
from autovend.parallel import SchedulerError
from autovend.pipeline.calibrate import run
from autovend.pipeline.cluster import ClusterConfig, memory_bytes, where
from tests.data.make_source import write_source


def _params(tmp_path, cluster: dict | None) -> object:
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({} if cluster is None else {"cluster": cluster}))
    return path


def _triple(config: ClusterConfig) -> tuple:
    return config.scheduler, config.workers, config.worker_memory


def test_the_command_line_wins_over_the_params_file(tmp_path):
    params = _params(tmp_path, {"scheduler": "tcp://10.0.0.1:8786", "workers": 8})
    assert _triple(where(params, None, None)) == ("tcp://10.0.0.1:8786", 8, None)
    assert _triple(where(params, None, 3)) == ("tcp://10.0.0.1:8786", 3, None)
    assert _triple(where(params, "local", 2)) == ("local", 2, None)
    assert _triple(where(_params(tmp_path, None), None, None)) == (None, None, None)
    assert _triple(where(None, None, None)) == (None, None, None)
    local = _params(tmp_path, {"scheduler": "local", "workers": 2, "worker_memory": "2GiB"})
    assert _triple(where(local, None, None)) == ("local", 2, "2GiB")
    assert _triple(where(local, None, None, "1500MB")) == ("local", 2, "1500MB")
    assert _triple(where(local, "local", 4)) == ("local", 4, None)  # a scheduler named here takes nothing from the file


def test_worker_memory_takes_dask_sizes_and_names_a_bad_one(tmp_path):
    assert memory_bytes("2GiB") == 2 * 2**30
    assert memory_bytes("1500MB") == 1_500_000_000
    for bad in ("lots", "0GiB", "-1GiB"):
        with pytest.raises(ValueError, match="2GiB or 1500MB"):
            memory_bytes(bad)
    with pytest.raises(ConfigError, match=r"`cluster`[\s\S]*worker_memory[\s\S]*2GiB or 1500MB"):
        where(_params(tmp_path, {"scheduler": "local", "worker_memory": "lots"}), None, None)
    with pytest.raises(ConfigError, match=r"--worker-memory: .*'2 gigs'"):
        where(None, "local", 2, "2 gigs")


def test_a_bad_cluster_section_names_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"`cluster`[\s\S]*workers"):
        where(_params(tmp_path, {"workers": 0}), None, None)
    with pytest.raises(ConfigError, match=r"`cluster`[\s\S]*nodes"):
        where(_params(tmp_path, {"nodes": 3}), None, None)


def test_workers_without_a_scheduler_are_refused(tmp_path):
    source = write_source(tmp_path / "src")
    with pytest.raises(ConfigError, match="--workers needs --scheduler"):
        run(source, tmp_path / "out", None, None, workers=2)
    assert not (tmp_path / "out").exists()


def test_worker_memory_needs_a_local_cluster(tmp_path):
    source = write_source(tmp_path / "src")
    with pytest.raises(ConfigError, match="--worker-memory needs --scheduler local"):
        run(source, tmp_path / "out", None, None, worker_memory="2GiB")
    with pytest.raises(SchedulerError, match="dask worker ADDRESS --memory-limit"):
        run(source, tmp_path / "out", None, None, scheduler="tcp://127.0.0.1:9", worker_memory="2GiB")
    assert not (tmp_path / "out").exists()


def test_an_unreachable_scheduler_says_how_to_start_one(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "CONNECT_TIMEOUT", "1s")
    source = write_source(tmp_path / "src")
    with pytest.raises(
        SchedulerError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:9[\s\S]*dask scheduler"
    ):
        run(source, tmp_path / "out", None, None, scheduler="tcp://127.0.0.1:9")
    assert not (tmp_path / "out").exists()


def test_a_calibration_in_process_imports_neither_dask_nor_matplotlib(tmp_path):
    # 0.9 s and 0.7 s of CPU a run (issue [Z]'s 1M-line source): Dask only when a cluster is asked for, matplotlib
    # only to draw a report
    import datetime as dt
    import subprocess
    import sys

    from autovend.data.synth.config import SynthConfig
    from autovend.data.synth.generate import synthesize
    from autovend.data.synth.generate import write_source as write_synthetic

    start = dt.date(2024, 6, 3)
    cfg = SynthConfig(
        seed=3, start=start, end=start + dt.timedelta(days=59), locations={"worksite/canteen": 2}, n_with_inventory=1
    )
    source = tmp_path / "src"
    write_synthetic(synthesize(cfg), source, tmp_path / "truth")
    code = (
        "import sys; from pathlib import Path; from autovend.pipeline.calibrate import run; "
        f"run(Path({str(source)!r}), Path({str(tmp_path / 'cal')!r}), None, None); "
        "print(sorted(m for m in ('distributed', 'dask', 'matplotlib') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"

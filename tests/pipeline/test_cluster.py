"""Where the calibrate and validate stages compute: --scheduler and --workers, or the params file's `cluster`."""

from __future__ import annotations

import pytest
import yaml

from autovend import parallel
from autovend.errors import ConfigError
from autovend.parallel import SchedulerError
from autovend.pipeline.calibrate import run
from autovend.pipeline.cluster import where
from tests.data.make_source import write_source


def _params(tmp_path, cluster: dict | None) -> object:
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({} if cluster is None else {"cluster": cluster}))
    return path


def test_the_command_line_wins_over_the_params_file(tmp_path):
    params = _params(tmp_path, {"scheduler": "tcp://10.0.0.1:8786", "workers": 8})
    assert where(params, None, None) == ("tcp://10.0.0.1:8786", 8)
    assert where(params, None, 3) == ("tcp://10.0.0.1:8786", 3)
    assert where(params, "local", 2) == ("local", 2)
    assert where(_params(tmp_path, None), None, None) == (None, None)
    assert where(None, None, None) == (None, None)


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


def test_an_unreachable_scheduler_says_how_to_start_one(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "CONNECT_TIMEOUT", "1s")
    source = write_source(tmp_path / "src")
    with pytest.raises(
        SchedulerError, match=r"cannot reach the Dask scheduler at tcp://127.0.0.1:9[\s\S]*dask scheduler"
    ):
        run(source, tmp_path / "out", None, None, scheduler="tcp://127.0.0.1:9")
    assert not (tmp_path / "out").exists()

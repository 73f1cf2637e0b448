"""The provenance record: versions, numpy's CPU features and thread settings; differences between two records."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from autovend import __version__
from autovend.provenance import ENV_VARS, PACKAGES, Provenance, current_provenance, provenance_differences


def _numpy_table() -> dict[str, bool]:
    from numpy._core._multiarray_umath import __cpu_features__

    return dict(__cpu_features__)


def test_current_provenance_records_versions_and_cpu_features(monkeypatch):
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    here = current_provenance()
    assert here.python == platform.python_version() and here.machine == platform.machine()
    assert tuple(here.packages) == PACKAGES
    assert here.packages["autovend"] == __version__
    assert here.packages["numpy"] == np.__version__ and here.packages["pandas"] == pd.__version__
    table = _numpy_table()
    assert here.cpu_features == tuple(sorted(k for k, on in table.items() if on))
    assert set(table) - set(here.cpu_features) == {k for k, on in table.items() if not on}
    assert here.env == {"OMP_NUM_THREADS": "1"}  # only the variables that are set


def test_disabled_cpu_features_are_left_out():
    """numpy reads NPY_DISABLE_CPU_FEATURES at import, so the record is taken in a fresh interpreter."""
    from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__

    table = _numpy_table()
    optional = [f for f in __cpu_dispatch__ if table.get(f) and f not in __cpu_baseline__]
    if not optional:
        pytest.skip("this CPU enables no dispatched feature that could be disabled")
    feature = optional[0]
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS} | {"NPY_DISABLE_CPU_FEATURES": feature}
    code = "import json, autovend.provenance as p; print(json.dumps(p.current_provenance().to_json()))"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    record = json.loads(out.stdout)
    assert feature in current_provenance().cpu_features and feature not in record["cpu_features"]
    assert record["env"] == {"NPY_DISABLE_CPU_FEATURES": feature}


def test_json_round_trip_and_a_damaged_record():
    rec = Provenance("3.11.7", "x86_64", {"numpy": "2.4.6"}, ("AVX2", "SSE2"), {"OMP_NUM_THREADS": "2"})
    data = json.loads(json.dumps(rec.to_json()))
    assert data == {
        "python": "3.11.7",
        "machine": "x86_64",
        "packages": {"numpy": "2.4.6"},
        "cpu_features": ["AVX2", "SSE2"],
        "env": {"OMP_NUM_THREADS": "2"},
    }
    assert Provenance.from_json(data) == rec
    with pytest.raises(ValueError, match="cpu_features a list"):
        Provenance.from_json({**data, "cpu_features": "AVX2"})
    with pytest.raises(ValueError, match="is an object"):
        Provenance.from_json(["3.11.7"])  # type: ignore[arg-type]


def test_differences_name_each_change():
    before = Provenance(
        "3.11.7", "x86_64", {"numpy": "2.1.0", "scipy": "1.14.0"}, ("AVX2", "AVX512F", "SSE2"), {"OMP_NUM_THREADS": "4"}
    )
    after = Provenance(
        "3.12.1",
        "x86_64",
        {"numpy": "2.2.1", "scipy": "1.14.0", "pyarrow": "18.0.0"},
        ("AVX2", "FMA3", "SSE2"),
        {"NPY_DISABLE_CPU_FEATURES": "AVX512F"},
    )
    assert provenance_differences(before, before) == []
    assert provenance_differences(before, after) == [
        "python 3.11.7 -> 3.12.1",
        "numpy 2.1.0 -> 2.2.1",
        "pyarrow not installed -> 18.0.0",
        "CPU features: without AVX512F, with FMA3",
        "env NPY_DISABLE_CPU_FEATURES unset -> 'AVX512F'",
        "env OMP_NUM_THREADS '4' -> unset",
    ]

"""Shared fixtures: the full synthetic operator and its calibration are built once per test session."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
PARAMS = ROOT / "params" / "synthetic-cn.yaml"
SETTINGS = ROOT / "params" / "benchmark.yaml"


# Tests that build the full embedded operator (about a minute of session fixtures) are slow whatever they assert:
# `make test-fast` (pytest -m "not slow") leaves them out, `make test` runs everything.
SLOW_FIXTURES = frozenset({"synthetic_dirs", "synthetic_source", "synthetic_calibration", "synthetic_validation"})


def pytest_configure(config: pytest.Config) -> None:
    """The user's installed worlds stay out of the tests: AUTOVEND_WORLDS_PATH names an empty folder of their own."""
    import os
    import tempfile

    os.environ["AUTOVEND_WORLDS_PATH"] = tempfile.mkdtemp(prefix="autovend-test-worlds-")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that uses a full-operator fixture as slow."""
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _numpy_errors():
    """Floating-point trouble in our code raises instead of passing silently (PyBLP style)."""
    with np.errstate(divide="ignore", invalid="ignore", over="raise"):
        yield


@pytest.fixture(scope="session")
def synthetic_dirs(tmp_path_factory) -> tuple[Path, Path]:
    """The default synthetic operator (params/synthetic-cn.yaml), written once: (source_dir, truth_dir)."""
    from autovend.data.synth.config import load_synth_config
    from autovend.data.synth.generate import synthesize, write_source
    from autovend.demand.settings import load_demand_settings

    base = tmp_path_factory.mktemp("synthetic")
    src = synthesize(load_synth_config(PARAMS), load_demand_settings(SETTINGS))
    write_source(src, base / "source", base / "truth")
    return base / "source", base / "truth"


@pytest.fixture(scope="session")
def synthetic_source(synthetic_dirs):
    """The checked, loaded synthetic source."""
    from autovend.data.load import load_source

    return load_source(synthetic_dirs[0])


@pytest.fixture(scope="session")
def synthetic_calibration(synthetic_source):
    """The calibration of the full synthetic source with the default pipeline's params."""
    from autovend.calibration.calibrate import calibrate
    from autovend.calibration.config import load_calibration_config
    from autovend.demand.settings import load_demand_settings

    return calibrate(synthetic_source, load_calibration_config(PARAMS), load_demand_settings(SETTINGS))


@pytest.fixture(scope="session")
def synthetic_validation(synthetic_source):
    """The held-out validation of the full synthetic source with the default pipeline's params."""
    from autovend.calibration.config import load_calibration_config
    from autovend.demand.settings import load_demand_settings
    from autovend.validation.config import load_validation_config
    from autovend.validation.validate import validate

    return validate(
        synthetic_source,
        load_calibration_config(PARAMS),
        load_validation_config(PARAMS),
        load_demand_settings(SETTINGS),
    )

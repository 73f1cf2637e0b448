"""Stage `calibrate`: a checked source -> calibration folder (+ report)."""

from __future__ import annotations

import time
from pathlib import Path

from autovend.calibration.calibrate import CalibrationResult, calibrate
from autovend.calibration.config import load_calibration_config
from autovend.calibration.report import write_report
from autovend.data.load import load_source
from autovend.data.plausibility import load_check_settings
from autovend.demand.settings import load_demand_settings


def run(
    source_dir: Path,
    out_dir: Path,
    params: Path | None,
    settings: Path | None,
    report_dir: Path | None = None,
) -> tuple[CalibrationResult, float]:
    """Load and check the source (refused if it breaks the contract), calibrate, write."""
    t0 = time.perf_counter()
    source = load_source(source_dir, load_check_settings(params))
    result = calibrate(source, load_calibration_config(params), load_demand_settings(settings))
    result.write(out_dir)
    if report_dir is not None:
        write_report(result, report_dir)
    return result, time.perf_counter() - t0

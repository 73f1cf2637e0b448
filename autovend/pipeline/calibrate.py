"""Stage `calibrate`: a checked source -> calibration folder (+ report)."""

from __future__ import annotations

import time
from pathlib import Path

from autovend.calibration.calibrate import calibrate
from autovend.calibration.config import load_calibration_config
from autovend.calibration.estimator import DEFAULT_ESTIMATOR, Estimator
from autovend.calibration.report import write_report
from autovend.calibration.result import CalibrationResult
from autovend.data.load import Source, load_source
from autovend.data.plausibility import load_check_settings
from autovend.demand.settings import load_demand_settings
from autovend.io import OutputKind, check_distinct_outputs, check_output_dir
from autovend.memory import lean_allocation, release_freed
from autovend.progress import step, stepped


@stepped("calibrate", {"load and check the source": 0.6, "estimate": 13.2, "write": 2.6, "write the report": 3.4})
def run(
    source_dir: Path,
    out_dir: Path,
    params: Path | None,
    settings: Path | None,
    report_dir: Path | None = None,
    *,
    force: bool = False,
    estimator: Estimator = DEFAULT_ESTIMATOR,
) -> tuple[CalibrationResult, float]:
    """Check the output folders, load and check the source (refused if it breaks the contract), calibrate, write.

    `estimator`: "structural" (the default) or "paper" (`autovend.calibration.estimator`).

    An output folder must be absent, empty or an earlier output of its kind unless `force`
    (`autovend.io.check_output_dir`), and never holds or lies inside an input.
    """
    t0 = time.perf_counter()
    inputs = (source_dir, params, settings)
    check_distinct_outputs(out_dir, report_dir)
    check_output_dir(out_dir, OutputKind.CALIBRATION, force=force, inputs=inputs)
    if report_dir is not None:
        check_output_dir(report_dir, OutputKind.CALIBRATION_REPORT, force=force, inputs=inputs)
    config, demand_settings = load_calibration_config(params), load_demand_settings(settings)
    lean_allocation()
    # the source is passed on without a name here, so calibrate holds its only reference and frees it early
    result = calibrate(_checked(source_dir, params), config, demand_settings, estimator)
    step("write")
    result.write(out_dir, force=force)
    if report_dir is not None:
        step("write the report")
        write_report(result, report_dir, force=force)
    return result, time.perf_counter() - t0


def _checked(source_dir: Path, params: Path | None) -> Source:
    """The checked source; the check's temporaries go back to the system before the panel is built.

    Marks the steps of `run` around it: loading, then (the source loaded) the estimation it is handed to.
    """
    step("load and check the source")
    source = load_source(source_dir, load_check_settings(params))
    release_freed()
    step("estimate")
    return source

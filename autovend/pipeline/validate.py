"""Stage `validate`: held-out validation of a source -> report folder (metrics, plot data, figures)."""

from __future__ import annotations

import time
from pathlib import Path

from autovend.calibration.config import load_calibration_config
from autovend.data.load import load_source
from autovend.data.plausibility import load_check_settings
from autovend.demand.settings import load_demand_settings
from autovend.validation.config import load_validation_config
from autovend.validation.report import write_validation
from autovend.validation.validate import ValidationResult, validate


def run(
    source_dir: Path,
    out_dir: Path,
    params: Path | None,
    settings: Path | None,
    calibration_out: Path | None = None,
) -> tuple[ValidationResult, float]:
    """Validate and write; `calibration_out` keeps the training-window calibration."""
    t0 = time.perf_counter()
    source = load_source(source_dir, load_check_settings(params))
    vconf = load_validation_config(params)
    res = validate(source, load_calibration_config(params), vconf, load_demand_settings(settings))
    write_validation(res, out_dir, source.meta.name, vconf.limits.strip(), vconf.other_share)
    if calibration_out is not None:
        res.calibration.write(calibration_out)
    return res, time.perf_counter() - t0

"""Stage `validate`: held-out validation of a source -> report folder (metrics, plot data, figures)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

from autovend.calibration.calibrate import blocks_on
from autovend.calibration.config import load_calibration_config
from autovend.data.load import load_source
from autovend.data.plausibility import load_check_settings
from autovend.demand.settings import load_demand_settings
from autovend.io import OutputKind, check_distinct_outputs, check_output_dir
from autovend.memory import lean_allocation
from autovend.pipeline.calibrate import executor_for
from autovend.pipeline.cluster import where
from autovend.progress import step, stepped
from autovend.validation.config import load_validation_config
from autovend.validation.report import write_validation
from autovend.validation.validate import ValidationResult, validate


@stepped(
    "validate",
    {
        "load and check the source": 1.6,
        "validation": 42.9,
        "write the report": 0.9,
        "write the training calibration": 1.7,
    },
)
def run(
    source_dir: Path,
    out_dir: Path,
    params: Path | None,
    settings: Path | None,
    calibration_out: Path | None = None,
    *,
    force: bool = False,
    ignore_inventory: bool = False,
    scheduler: str | None = None,
    workers: int | None = None,
    worker_memory: str | None = None,
    announce: Callable[[str], None] | None = None,
) -> tuple[ValidationResult, float]:
    """Check the output folders, validate and write; `calibration_out` keeps the training-window calibration.

    `ignore_inventory` validates the source as if it had no inventory records (every machine sales-only, on
    pre-window shelves): what an operator without inventory exports would get, on records whose shelves are known.
    `scheduler` and `workers`: the validation's calibrations compute their statistics on that Dask cluster
    (`autovend.pipeline.calibrate.run`); the rest of the validation runs in this process.

    An output folder must be absent, empty or an earlier output of its kind unless `force`
    (`autovend.io.check_output_dir`), and never holds or lies inside an input.
    """
    t0 = time.perf_counter()
    inputs = (source_dir, params, settings)
    check_distinct_outputs(out_dir, calibration_out)
    check_output_dir(out_dir, OutputKind.VALIDATION_REPORT, force=force, inputs=inputs)
    if calibration_out is not None:
        check_output_dir(calibration_out, OutputKind.CALIBRATION, force=force, inputs=inputs)
    lean_allocation()  # an operator-scale source: large blocks come from and go back to the system
    step("load and check the source")
    source = load_source(source_dir, load_check_settings(params))
    if ignore_inventory:
        source = dataclasses.replace(source, inventory=None)
    vconf = load_validation_config(params)
    step("validation")
    cluster = where(params, scheduler, workers, worker_memory)
    with executor_for(cluster, partitioned=False) as executor:
        if announce is not None:
            announce(executor.description if executor is not None else "in process")
        with blocks_on(executor):
            res = validate(source, load_calibration_config(params), vconf, load_demand_settings(settings))
    name = f"{source.meta.name} (inventory records ignored)" if ignore_inventory else source.meta.name
    step("write the report")
    write_validation(res, out_dir, name, vconf.limits.strip(), vconf.other_share, force=force)
    if calibration_out is not None:
        step("write the training calibration")
        res.calibration.write(calibration_out, force=force)
    return res, time.perf_counter() - t0

"""Stage `calibrate`: a checked source -> calibration folder (+ report)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from autovend.calibration.assemble import Prepared, from_parts, on_executor
from autovend.calibration.calibrate import calibrate
from autovend.calibration.config import CalibrationConfig, load_calibration_config
from autovend.calibration.estimator import DEFAULT_ESTIMATOR, Estimator
from autovend.calibration.result import CalibrationResult
from autovend.data.load import Source, load_source
from autovend.data.parts import is_partitioned, locate
from autovend.data.plausibility import load_check_settings
from autovend.demand.settings import load_demand_settings
from autovend.errors import ConfigError
from autovend.io import OutputKind, check_distinct_outputs, check_output_dir
from autovend.memory import lean_allocation, release_freed
from autovend.parallel import Executor, LocalExecutor
from autovend.pipeline.cluster import ClusterConfig, memory_bytes, where
from autovend.progress import step, stepped


@stepped("calibrate", {"load and check the source": 0.6, "estimate": 13.2, "write": 2.6, "write the report": 3.4})
def run(
    source_dir: Path | str,
    out_dir: Path,
    params: Path | None,
    settings: Path | None,
    report_dir: Path | None = None,
    *,
    force: bool = False,
    estimator: Estimator = DEFAULT_ESTIMATOR,
    scheduler: str | None = None,
    workers: int | None = None,
    worker_memory: str | None = None,
    announce: Callable[[str], None] | None = None,
) -> tuple[CalibrationResult, float]:
    """Check the output folders, load and check the source (refused if it breaks the contract), calibrate, write.

    `estimator`: "structural" (the default) or "paper" (`autovend.calibration.estimator`). `source_dir` is a
    source folder, or a partitioned source's folder or URL (`autovend.data.parts`). `scheduler`: "local" (a Dask
    cluster of `workers` processes started here) or a Dask scheduler's address: the source is read and the
    panel's blocks held and summed on the cluster's workers (docs/scale.md); None takes the params file's
    `cluster` section (`autovend.pipeline.cluster`), whose default computes them in this process. Either way the
    estimates are the same bytes. `announce` is told where the blocks are held.

    An output folder must be absent, empty or an earlier output of its kind unless `force`
    (`autovend.io.check_output_dir`), and never holds or lies inside an input.
    """
    t0 = time.perf_counter()
    local_source = "://" not in str(source_dir)
    inputs = (Path(source_dir) if local_source else None, params, settings)
    check_distinct_outputs(out_dir, report_dir)
    check_output_dir(out_dir, OutputKind.CALIBRATION, force=force, inputs=inputs)
    if report_dir is not None:
        check_output_dir(report_dir, OutputKind.CALIBRATION_REPORT, force=force, inputs=inputs)
    config, demand_settings = load_calibration_config(params), load_demand_settings(settings)
    cluster = where(params, scheduler, workers, worker_memory)
    lean_allocation()
    with executor_for(cluster, partitioned=is_partitioned(source_dir)) as executor:
        if announce is not None:
            announce(executor.description if executor is not None else "in process")
        # the source is passed on without a name here, so calibrate holds its only reference and frees it early
        result = calibrate(_checked(source_dir, params, config, executor), config, demand_settings, estimator)
        step("write")
        result.write(out_dir, force=force)
    if report_dir is not None:
        from autovend.calibration.report import write_report  # matplotlib: imported only to draw

        step("write the report")
        write_report(result, report_dir, force=force)
    return result, time.perf_counter() - t0


@contextlib.contextmanager
def executor_for(cluster: ClusterConfig, *, partitioned: bool) -> Iterator[Executor | None]:
    """Where the blocks are held: a Dask cluster (`cluster.scheduler`), in process (a partitioned source), or None."""
    if cluster.scheduler is not None:
        from autovend.parallel import connect

        memory = memory_bytes(cluster.worker_memory) if cluster.worker_memory is not None else None
        with connect(cluster.scheduler, cluster.workers, memory_limit=memory, progress=True) as executor:
            yield executor
        return
    if cluster.workers is not None:
        raise ConfigError("--workers needs --scheduler (local, or a Dask scheduler's address)")
    if cluster.worker_memory is not None:
        raise ConfigError("--worker-memory needs --scheduler local (a running scheduler's workers have their own)")
    yield LocalExecutor() if partitioned else None


def _checked(
    source_dir: Path | str, params: Path | None, config: CalibrationConfig, executor: Executor | None
) -> Source | Prepared:
    """The checked source, or its panel built where its blocks are held (partitioned sources, or a cluster).

    Marks the steps of `run` around it: loading, then (the source loaded) the estimation it is handed to. The
    check's temporaries go back to the system before the panel is built.
    """
    step("load and check the source")
    check_settings = load_check_settings(params)
    if is_partitioned(source_dir):
        assert executor is not None
        prepared = from_parts(locate(source_dir), check_settings, config, executor)
        step("estimate")
        return prepared
    source = load_source(source_dir, check_settings)
    release_freed()
    step("estimate")
    return source if executor is None else on_executor(source, config, executor)

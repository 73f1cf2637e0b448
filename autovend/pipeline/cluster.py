"""Where the pipeline's calibrations compute their statistics: the params section `cluster`.

    cluster:
      scheduler: local        # null (the default): in this process; local: a Dask cluster started here;
                              # tcp://HOST:PORT: a running Dask scheduler (its workers started with `dask worker`)
      workers: 4              # local: worker processes (default 2); an address: workers to wait for
      worker_memory: 2GiB     # local: each worker's memory limit (default: Dask's, the machine's memory / workers);
                              # the blocks' split cells beyond 40% of it, less 160 MiB, go to its disk

`autovend calibrate` and `autovend validate` take it from their --params file unless --scheduler is given; the
DVC stages pass their params file, so they take it from there. The section is not a dependency of any stage: the
estimates are the same bytes wherever they are computed (docs/scale.md).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from autovend.config import load_section
from autovend.errors import ConfigError


class ClusterConfig(BaseModel):
    """The Dask scheduler and workers of the pipeline's calibrations (module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scheduler: str | None = None
    workers: int | None = Field(None, ge=1)
    worker_memory: str | None = None

    @field_validator("worker_memory")
    @classmethod
    def _bytes(cls, value: str | None) -> str | None:
        if value is not None:
            memory_bytes(value)
        return value


def memory_bytes(value: str) -> int:
    """Bytes of a memory size as Dask writes them ("2GiB", "1500MB"); ValueError naming the forms it takes."""
    from dask.utils import parse_bytes

    try:
        n = int(parse_bytes(value))
    except (ValueError, TypeError):
        n = 0
    if n <= 0:
        raise ValueError(f"worker memory must be a positive size such as 2GiB or 1500MB, got {value!r}")
    return n


def where(
    params: Path | None, scheduler: str | None, workers: int | None, worker_memory: str | None = None
) -> ClusterConfig:
    """The cluster to use: the command line's when it names a scheduler, else the params file's.

    --workers and --worker-memory given alone override the params file's values.
    """
    if worker_memory is not None:
        try:
            memory_bytes(worker_memory)
        except ValueError as exc:
            raise ConfigError(f"--worker-memory: {exc}") from None
    if scheduler is not None:
        return ClusterConfig(scheduler=scheduler, workers=workers, worker_memory=worker_memory)
    config = load_section(ClusterConfig, params, "cluster")
    return ClusterConfig(
        scheduler=config.scheduler,
        workers=workers if workers is not None else config.workers,
        worker_memory=worker_memory if worker_memory is not None else config.worker_memory,
    )

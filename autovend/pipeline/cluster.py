"""Where the pipeline's calibrations compute their statistics: the params section `cluster`.

    cluster:
      scheduler: local        # null (the default): in this process; local: a Dask cluster started here;
                              # tcp://HOST:PORT: a running Dask scheduler (its workers started with `dask worker`)
      workers: 4              # local: worker processes (default 2); an address: workers to wait for

`autovend calibrate` and `autovend validate` take it from their --params file unless --scheduler is given; the
DVC stages pass their params file, so they take it from there. The section is not a dependency of any stage: the
estimates are the same bytes wherever they are computed (docs/scale.md).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from autovend.config import load_section


class ClusterConfig(BaseModel):
    """The Dask scheduler and workers of the pipeline's calibrations (module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scheduler: str | None = None
    workers: int | None = Field(None, ge=1)


def where(params: Path | None, scheduler: str | None, workers: int | None) -> tuple[str | None, int | None]:
    """The scheduler and workers to use: the command line's when it names a scheduler, else the params file's."""
    if scheduler is not None:
        return scheduler, workers
    config = load_section(ClusterConfig, params, "cluster")
    return config.scheduler, workers if workers is not None else config.workers

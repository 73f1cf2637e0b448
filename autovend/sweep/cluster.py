"""Connecting a sweep to Dask: an existing scheduler, or a local cluster started (and closed) for it.

    with connect(scheduler, workers, n_todo) as (client, description):
        ...

The local cluster's worker processes are started with SIGINT ignored: a terminal's Ctrl-C goes to the whole
foreground process group, and it is the sweep's client that stops the runs in an orderly way (it asks their
tasks to stop them, writes what finished, and then closes the cluster), not each worker on its own.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

from autovend.parallel import SchedulerError as SchedulerError  # where the engine finds it
from autovend.parallel import scheduler_client

CLOSE_TIMEOUT_S = 10.0  # how long the local cluster's workers get to close


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored in this process while the block starts child processes (they keep it ignored)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be changed on the main thread; a sweep run from a thread is not a terminal's
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@contextlib.contextmanager
def connect(scheduler: str | None, workers: int | None, n_todo: int) -> Iterator[tuple[Any, str]]:
    """A Dask client: to `scheduler` (waiting for `workers` workers, at least one), or to a new LocalCluster.

    The local cluster has `workers` processes (default: the CPUs, at most one per run to do) of one
    thread each, no dashboard and no profiler; it is closed on exit.
    """
    import logging

    from distributed import Client, LocalCluster

    if scheduler is not None:
        with scheduler_client(scheduler, workers) as client:
            yield client, f"scheduler {scheduler}: {_describe(client)}"
        return
    import dask

    n = workers or max(1, min(os.cpu_count() or 1, n_todo))
    # the workers' sampling profiler feeds only the dashboard, which is not started; it costs CPU on pure-Python runs
    with dask.config.set({"distributed.worker.profile.enabled": False}), _sigint_ignored():
        cluster = LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
        )
    try:
        client = Client(cluster)
        try:
            yield client, f"local cluster: {_describe(client)}"
        finally:
            client.close()
    finally:
        cluster.close(timeout=CLOSE_TIMEOUT_S)


def _describe(client: Any) -> str:
    info = client.scheduler_info(n_workers=-1)["workers"]
    threads = sum(int(w.get("nthreads", 0)) for w in info.values())
    return f"{len(info)} workers, {threads} threads"

"""Where the statistics of a large job run: in this process, or on a Dask cluster (local, or a scheduler's workers).

A job hands its work out in two forms, the same in either place:

- `Executor.submit(fn, items, *args)`: a task `fn(item, *args)` per item (a source partition to read), whose
  results stay where they were made (`Ref`s) until `gather` brings the small ones back or another task takes them;
- `Executor.groups(build, inputs)`: state held for the whole job, one group per worker (the blocks of machines
  whose cells it keeps), built by `build(*inputs[i])` where it will live; `Groups.run(fn, *args)` calls
  `fn(state, *args)` on every group at once and returns the results in group order.

In process (`LocalExecutor`) a Ref is the value itself and the groups are one list, run in turn. On Dask
(`DaskExecutor`) a Ref is a future and each group an actor on its own worker, so its state stays in that
worker's memory across calls (a call goes to the worker directly, not through the scheduler: a few
milliseconds). A worker may hold several groups (built one after the other); `run` reaches them all with one
call to the worker (`Holder.apply_lane`), which applies the function to its groups in turn. Nothing here
knows what the functions compute; results come back in a fixed order whatever the number of workers, so a
job that sums them in that order gets the same bits everywhere.
"""

from __future__ import annotations

import contextlib
import logging
import operator
import sys
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TextIO

from autovend.errors import AutoVendError

CONNECT_TIMEOUT = "30s"
WORKER_WAIT_S = 120.0
CLOSE_TIMEOUT_S = 10.0
# A local cluster's workers hold a job's state in actors, which a restarted worker would not have: over their memory
# limit they spill what Dask holds to disk (from 60% of it) but are neither paused (a paused worker runs no task,
# and its actors' state would keep it paused) nor restarted (the job would fail). The job keeps its own state within
# the limit (`autovend.calibration.blocks.spill_budget`). Workers started by hand take these from their own config.
LOCAL_WORKER_MEMORY = {"distributed.worker.memory.pause": False, "distributed.worker.memory.terminate": False}
FOLLOW_POLL_S = 0.1  # how often the tasks' progress bar looks for tasks that ended
CLOCK_S = 1.0  # on a terminal, the bar's clock is redrawn this often while no task ends
BAR_WIDTH = 40


class SchedulerError(AutoVendError):
    """The Dask scheduler cannot be reached or has no workers: check the address, start `dask worker ADDRESS`."""


class Groups(Protocol):
    """State held across calls, one group per worker (see the module docstring)."""

    def run(self, fn: Callable[..., Any], *args: Any) -> list[Any]:
        """fn(state, *args) on every group; the results in group order."""
        ...

    @property
    def lanes(self) -> list[int]:
        """The worker of each group (0 for every group held in this process): groups of one lane work in turn."""
        ...

    @property
    def depth(self) -> int:
        """Calls worth having under way on one lane at once (1 in this process: a call is done when it is made)."""
        ...

    def start_on(self, group: int, fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
        """fn(state, *args) on one group, begun: it works while the caller goes on; the returned function waits."""
        ...

    def close(self) -> None:
        """Release the groups' state."""
        ...


class Executor(Protocol):
    """Where tasks run and state is held (module docstring)."""

    n_groups: int
    description: str

    def submit(self, fn: Callable[..., Any], items: Sequence[Any], *args: Any) -> list[Any]:
        """A task fn(item, *args) per item; their results as Refs, in item order."""
        ...

    def pick(self, refs: Sequence[Any], index: int) -> list[Any]:
        """Element `index` of each result (a tuple), as Refs."""
        ...

    def scatter(self, values: Sequence[Any]) -> list[Any]:
        """Values made here, as Refs where the tasks and groups can take them."""
        ...

    def gather(self, refs: Sequence[Any]) -> list[Any]:
        """The values of the Refs."""
        ...

    def release(self, refs: Sequence[Any]) -> None:
        """Forget the Refs (their values may go)."""
        ...

    def groups(self, build: Callable[..., Any], inputs: Sequence[Sequence[Any]]) -> Groups:
        """One group per entry of `inputs`, its state `build(*entry)` (Refs among the entry are resolved).

        The Refs of an entry (alone or in a list) are released once its group is built: the entry is consumed.
        """
        ...


class _ListGroups:
    def __init__(self, states: list[Any]) -> None:
        self.states = states

    def run(self, fn: Callable[..., Any], *args: Any) -> list[Any]:
        return [fn(state, *args) for state in self.states]

    @property
    def lanes(self) -> list[int]:
        return [0] * len(self.states)

    @property
    def depth(self) -> int:
        return 1

    def start_on(self, group: int, fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
        result = fn(self.states[group], *args)  # in this process: done at once
        return lambda: result

    def close(self) -> None:
        self.states = []


class LocalExecutor:
    """Everything in this process, in turn: a Ref is its value, the groups one list."""

    def __init__(self, n_groups: int = 1) -> None:
        self.n_groups = n_groups
        self.description = "in process"

    def submit(self, fn: Callable[..., Any], items: Sequence[Any], *args: Any) -> list[Any]:
        """A task fn(item, *args) per item; their results as Refs, in item order."""
        return [fn(item, *args) for item in items]

    def pick(self, refs: Sequence[Any], index: int) -> list[Any]:
        """Element `index` of each result (a tuple), as Refs."""
        return [ref[index] for ref in refs]

    def gather(self, refs: Sequence[Any]) -> list[Any]:
        """The values of the Refs."""
        return list(refs)

    def scatter(self, values: Sequence[Any]) -> list[Any]:
        """The values themselves."""
        return list(values)

    def release(self, refs: Sequence[Any]) -> None:
        """Forget the Refs (their values may go)."""
        return None

    def groups(self, build: Callable[..., Any], inputs: Sequence[Sequence[Any]]) -> Groups:
        """One group per entry of `inputs`, its state `build(*entry)` (Refs among the entry are resolved)."""
        return _ListGroups([build(*entry) for entry in inputs])


# The groups' holders alive in this worker process, by their tokens (`Holder.apply_lane` reaches a worker's others)
_HELD: weakref.WeakValueDictionary[str, Holder] = weakref.WeakValueDictionary()


class Holder:
    """A group's state on a Dask worker (an actor): built once, then called with functions of it.

    Each holder is known in its worker process by its token while its actor lives, so one call to one of a
    worker's holders can apply a function to all the worker's groups (`apply_lane`): a round over every group
    then costs a call a worker, not a call a group (each call about 3 ms on a local cluster).
    """

    def __init__(self, token: str, build: Callable[..., Any], *inputs: Any) -> None:
        self.state = build(*inputs)
        _HELD[token] = self

    def apply(self, fn: Callable[..., Any], *args: Any) -> Any:
        """fn(state, *args)."""
        return fn(self.state, *args)

    def apply_lane(self, tokens: list[str], fn: Callable[..., Any], *args: Any) -> list[Any]:
        """fn(state, *args) on the states of the holders `tokens` of this worker, in that order."""
        return [fn(_HELD[token].state, *args) for token in tokens]


class _ActorGroups:
    def __init__(self, actors: list[Any], futures: list[Any], lanes: list[int], tokens: list[str]) -> None:
        self.actors = actors
        self.futures = futures  # the actors live while their futures are held
        self._lanes = lanes
        self.tokens = tokens
        self._members: dict[int, list[int]] = {}  # each worker's groups, in group order
        for g, lane in enumerate(lanes):
            self._members.setdefault(lane, []).append(g)

    @property
    def lanes(self) -> list[int]:
        return self._lanes

    @property
    def depth(self) -> int:
        return 2  # one working, one waiting on the worker: no idle round trip between them

    def run(self, fn: Callable[..., Any], *args: Any) -> list[Any]:
        members = self._members
        calls = {
            lane: self.actors[gs[0]].apply_lane([self.tokens[g] for g in gs], fn, *args) for lane, gs in members.items()
        }
        out: list[Any] = [None] * len(self.actors)
        for lane, gs in members.items():
            for g, value in zip(gs, calls[lane].result(), strict=True):
                out[g] = value
        return out

    def start_on(self, group: int, fn: Callable[..., Any], *args: Any) -> Callable[[], Any]:
        return self.actors[group].apply(fn, *args).result

    def close(self) -> None:
        self.actors, self.futures = [], []


class DaskExecutor:
    """Tasks as Dask futures, groups as actors, one per worker (module docstring)."""

    def __init__(self, client: Any, description: str, progress: bool = False) -> None:
        self.client = client
        self.description = description
        self.workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
        self.n_groups = len(self.workers)
        self.progress = progress

    def submit(self, fn: Callable[..., Any], items: Sequence[Any], *args: Any) -> list[Any]:
        """A task fn(item, *args) per item; their results as Refs, in item order."""
        shared = [self.client.scatter(a, broadcast=True) if _large(a) else a for a in args]
        futures = [self.client.submit(fn, item, *shared, pure=False) for item in items]
        if self.progress and futures:
            follow(futures)
        return futures

    def pick(self, refs: Sequence[Any], index: int) -> list[Any]:
        """Element `index` of each result (a tuple), as Refs."""
        return [self.client.submit(operator.getitem, ref, index, pure=False) for ref in refs]

    def gather(self, refs: Sequence[Any]) -> list[Any]:
        """The values of the Refs."""
        return list(self.client.gather(list(refs)))

    def scatter(self, values: Sequence[Any]) -> list[Any]:
        """The values sent to the workers (spread over them), as futures."""
        return list(self.client.scatter(list(values), hash=False)) if values else []

    def release(self, refs: Sequence[Any]) -> None:
        """Forget the Refs (their values may go)."""
        for ref in refs:
            ref.release()

    def groups(self, build: Callable[..., Any], inputs: Sequence[Sequence[Any]]) -> Groups:
        """One group per entry of `inputs`, its state `build(*entry)` (Refs among the entry are resolved)."""
        futures = []
        tokens = [uuid.uuid4().hex for _ in inputs]
        for i, entry in enumerate(inputs):
            worker = self.workers[i % len(self.workers)]
            futures.append(
                self.client.submit(
                    Holder, tokens[i], build, *entry, actor=True, workers=[worker], allow_other_workers=False,
                    pure=False,
                )
            )  # fmt: skip
        actors = []
        for entry, future in zip(inputs, futures, strict=True):
            actors.append(future.result())
            self.release([r for item in entry for r in (item if isinstance(item, list) else [item]) if _is_ref(r)])
        return _ActorGroups(actors, futures, [i % len(self.workers) for i in range(len(inputs))], tokens)


def _is_ref(value: Any) -> bool:
    from distributed import Future

    return isinstance(value, Future)


def _large(value: Any) -> bool:
    """Whether an argument is worth sending to the workers once (a table, an array), not with each task."""
    return hasattr(value, "nbytes") or hasattr(value, "memory_usage") or isinstance(value, (list, dict, tuple))


@contextlib.contextmanager
def scheduler_client(scheduler: str, workers: int | None, hint: str = "") -> Iterator[Any]:
    """A Dask client of the running scheduler at `scheduler`, once it has `workers` workers (at least one).

    SchedulerError when it cannot be reached (`hint` ends that message) or its workers do not come; closed on exit.
    """
    from distributed import Client

    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SchedulerError(
            f"cannot reach the Dask scheduler at {scheduler} ({exc}); start one with `dask scheduler` and give "
            f"its address (tcp://HOST:PORT){hint}"
        ) from None
    try:
        want = max(workers or 1, 1)
        try:
            client.wait_for_workers(want, timeout=WORKER_WAIT_S)
        except TimeoutError:
            have = len(client.scheduler_info(n_workers=-1)["workers"])
            raise SchedulerError(
                f"the scheduler at {scheduler} has {have} worker(s), {want} wanted, after {WORKER_WAIT_S:.0f} s; "
                f"start workers with `dask worker {scheduler} --nthreads 1`"
            ) from None
        yield client
    finally:
        client.close()


@contextlib.contextmanager
def connect(
    scheduler: str | None, workers: int | None, *, memory_limit: int | None = None, progress: bool = False
) -> Iterator[DaskExecutor]:
    """A DaskExecutor on the scheduler at `scheduler` ("local" or None: a new local cluster of `workers` processes).

    An existing scheduler is waited for until it has `workers` workers (at least one); its workers' memory limits
    are their own (`dask worker --memory-limit`). The local cluster has one thread per worker, each with
    `memory_limit` bytes (None: Dask's default, the machine's memory shared among them), and its dashboard on a
    free port; it is closed on exit.
    """
    from distributed import Client, LocalCluster

    if scheduler not in (None, "local"):
        if memory_limit is not None:
            raise SchedulerError(
                "a worker memory limit is set where the workers start: `dask worker ADDRESS --memory-limit 2GiB` "
                "(--worker-memory is for --scheduler local)"
            )
        with scheduler_client(scheduler, workers, ", or use --scheduler local") as client:
            yield DaskExecutor(client, f"scheduler {scheduler}: {_describe(client)}", progress)
        return
    import dask

    with dask.config.set(LOCAL_WORKER_MEMORY):
        cluster = LocalCluster(
            n_workers=max(workers or 2, 1),
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
            memory_limit=memory_limit if memory_limit is not None else "auto",
        )
    try:
        client = Client(cluster)
        try:
            yield DaskExecutor(client, f"local cluster: {_describe(client)}", progress)
        finally:
            client.close()
    finally:
        cluster.close(timeout=CLOSE_TIMEOUT_S)


def _describe(client: Any) -> str:
    info = client.scheduler_info(n_workers=-1)["workers"]
    threads = sum(int(w.get("nthreads", 0)) for w in info.values())
    link = getattr(client, "dashboard_link", None)
    return f"{len(info)} workers, {threads} threads" + (f"; dashboard {link}" if link else "")


def follow(futures: Sequence[Any], out: TextIO | None = None, poll_s: float = FOLLOW_POLL_S) -> None:
    """Draw the share of `futures` finished (done or failed) on one line of `out` (stdout) until all have finished.

    The bar looks like Dask's text progress bar but is drawn from the client's own futures
    (`distributed.as_completed`). Dask's bar (`distributed.progress`) follows them through a scheduler plugin and
    redraws every 0.1 s whatever happens. This one draws a frame when the share done changes (at most 101 a round)
    and, on a terminal, redraws its clock each second: a log or a pipe gets a few kilobytes a round, not 800 bytes
    a second. A pipe nobody reads while the command runs fills in about 80 s of redraws every 0.1 s, and the
    command then blocks in the write: the x200 benchmark's child did, twice, until the benchmark wrote to files.
    """
    from distributed import as_completed

    if not futures:
        return
    out = out if out is not None else sys.stdout
    terminal = out.isatty()
    total, start, done = len(futures), time.perf_counter(), 0
    drawn, drawn_at = -1, start
    finished = as_completed(futures)
    while True:
        news = len(finished.next_batch(block=False))
        done += news
        now, share = time.perf_counter(), 100 * done // total
        if share != drawn or (terminal and now - drawn_at >= CLOCK_S):
            _draw(out, done, total, now - start)
            drawn, drawn_at = share, now
        if done >= total:
            break
        if not news:
            time.sleep(poll_s)
    print(file=out, flush=True)


def _draw(out: TextIO, done: int, total: int, elapsed: float) -> None:
    filled = BAR_WIDTH * done // total
    bar = "#" * filled + " " * (BAR_WIDTH - filled)
    out.write(f"\r[{bar}] | {100 * done // total:3d}% Completed | {elapsed:5.1f}s")
    out.flush()

"""Running a sweep on Dask distributed: a local cluster by default, or an existing scheduler.

    outcome = run_sweep(load_spec("sweep.yaml"), "sweeps/s1")                        # LocalCluster
    outcome = run_sweep(spec, "sweeps/s1", scheduler="tcp://10.0.0.5:8786", workers=4)

Before anything runs, every world is loaded (its hash and horizon), every agent entry checked and
every run folder read: finished runs are kept (one that does not match the spec, e.g. made on a
world that has changed since, stops the sweep before it starts; nothing is deleted), interrupted
ones resume from their checkpoint, the others start. Only the runs still to do are submitted, one
Dask task each (`tasks.execute`), with `retries`: a task that raises is run again and resumes from
its last checkpoint, and a task whose worker is lost is rescheduled by Dask and resumes the same
way. With nothing to do no cluster is started.

Rate limits and cost: the runs of a provider with a limit in the spec are submitted no more at
once than the limit, and hold a lease of a named, cluster-wide Dask semaphore while they run (so
sweeps sharing a scheduler share the limit). The tasks report every settled day with their API cost
so far (Dask events); once the total (runs finished before included) reaches `max_cost_usd`, a
Dask variable tells the tasks that have not started to return without running and the held runs
are not submitted; runs under way finish.

At the end results.csv, paired.csv, leaderboard.md and leaderboard.html are written from the run folders
of every finished run of the spec (each run re-checked by `autovend verify` on its worker, or here for a run
finished before this sweep started that it has no holding record of, e.g. one copied in: `verified`).
"""

from __future__ import annotations

import collections
import contextlib
import queue
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autovend.errors import AutoVendError, BundleError, ConfigError
from autovend.sweep.agents import check_agent
from autovend.sweep.cluster import SchedulerError as SchedulerError  # where the CLI and tests find it
from autovend.sweep.cluster import connect
from autovend.sweep.folder import check_sweep_folder, mark_sweep_folder
from autovend.sweep.leaderboard import write_leaderboard
from autovend.sweep.leaderboard_html import write_leaderboard_html
from autovend.sweep.progress import SweepStatus, Tracker
from autovend.sweep.results import ResultRow, read_result, write_results
from autovend.sweep.robustness_files import write_robustness
from autovend.sweep.spec import AgentEntry, SweepSpec
from autovend.sweep.standing import standing_cells, write_paired
from autovend.sweep.tasks import (
    STOP_COST,
    STOP_INTERRUPT,
    AgentIdentity,
    Channel,
    FolderState,
    RunTask,
    TaskOutcome,
    WorldFacts,
    execute,
    folder_status,
    plan,
    verify_once,
)
from autovend.sweep.variants import expand as expand_variants
from autovend.sweep.variants import write_variants

DEFAULT_RETRIES = 2
POLL_S = 0.5
INTERRUPT_WAIT_S = 10.0  # after Ctrl-C: how long the runs under way get to stop (their tasks stop them)


@dataclass(frozen=True)
class SweepPlan:
    """The runs of a sweep and the state of their folders before it runs."""

    tasks: tuple[RunTask, ...]
    states: dict[str, FolderState]  # run name -> new / unfinished / finished
    prior_cost_usd: float  # the API cost of the runs finished before

    @property
    def todo(self) -> list[RunTask]:
        """The runs still to do (new and unfinished), in spec order."""
        return [t for t in self.tasks if self.states[t.name] != "finished"]

    def count(self, state: FolderState) -> int:
        """How many runs are in `state`."""
        return sum(1 for s in self.states.values() if s == state)


@dataclass(frozen=True)
class SweepOutcome:
    """What a sweep did: outcomes of the runs submitted, failures, cost, and the files written."""

    plan: SweepPlan
    outcomes: dict[str, TaskOutcome]
    failures: dict[str, str]  # run name -> why it failed
    cost_usd: float
    cost_stopped: bool  # the cost limit was reached, so some runs were not started
    rows: tuple[ResultRow, ...]
    results_path: Path
    leaderboard_path: Path
    leaderboard_html_path: Path
    cluster: str | None  # what ran the tasks, None when nothing was submitted
    interrupted: bool = False  # Ctrl-C stopped it: the runs under way were stopped (they resume next time)

    @property
    def ran(self) -> list[str]:
        """The runs finished by this invocation."""
        return [n for n, o in self.outcomes.items() if o.status == "ran"]

    @property
    def skipped(self) -> list[str]:
        """The runs not started because the cost limit was reached."""
        return [
            t.name for t in self.plan.todo if t.name not in self.outcomes or self.outcomes[t.name].status == "skipped"
        ]

    @property
    def timed_out(self) -> dict[str, str]:
        """The runs the spec's timeout_s stopped in this invocation, and why."""
        return {n: o.error or "" for n, o in self.outcomes.items() if o.status == "timed_out"}

    @property
    def complete(self) -> bool:
        """True when every run of the spec has a result (`rows`: the finished runs)."""
        return len(self.rows) == len(self.plan.tasks)


def agent_identity(entry: AgentEntry) -> AgentIdentity | None:
    """The name and configuration run.json will record for `entry` (None for a plugin, known only when built)."""
    if entry.is_llm:
        from autovend.agents.llm import load_llm_config, parse_spec
        from autovend.sweep.spec import LLM_PREFIX

        extra = {"interventions": tuple(entry.interventions)} if entry.interventions else {}
        config = load_llm_config(entry.config, **extra).model_dump(mode="json")
        return AgentIdentity(LLM_PREFIX + parse_spec(entry.agent), config)
    from autovend.agents.base import AGENTS, make_agent

    if entry.agent not in AGENTS:
        return None
    agent = make_agent(entry.agent, 0, entry.config)
    cfg = getattr(agent, "config", None)
    dump = getattr(cfg, "model_dump", None)
    return AgentIdentity(agent.name, dump(mode="json") if callable(dump) else {})


def world_facts(spec: SweepSpec, known: dict[str, WorldFacts] | None = None) -> dict[str, WorldFacts]:
    """Load every world of the spec once (a broken bundle fails here, naming it): label -> facts.

    A world is a bundle folder or the name of a shipped or installed world (`autovend.world.names.resolve_world`);
    those in `known` (the variants, `autovend.sweep.variants`) are not loaded.
    """
    from autovend.world.bundle import load_world
    from autovend.world.names import resolve_world

    out = dict(known or {})
    for i, w in enumerate(spec.worlds, start=1):
        if w.label in out:
            continue
        try:
            folder = resolve_world(w.path)
            world = load_world(folder)
        except BundleError as exc:
            raise BundleError(f"worlds, entry {i}: {exc}") from None
        out[w.label] = WorldFacts(str(folder.resolve()), world.world_hash, world.horizon_days)
    return out


def world_inputs(spec: SweepSpec) -> list[Path]:
    """The spec's world folders (a name as the folder it stands for), for the output folder's rule."""
    from autovend.world.names import resolve_world

    folders = []
    for w in spec.worlds:
        try:
            folders.append(resolve_world(w.path))
        except BundleError:
            folders.append(w.path)  # refused with its entry number by `world_facts`
    return folders


def make_plan(spec: SweepSpec, out_dir: str | Path, known: dict[str, WorldFacts] | None = None) -> SweepPlan:
    """Check the spec against its worlds, agents and run folders; raise `ConfigError` for any mismatch.

    `known`: facts of worlds not to load (the variants of `autovend.sweep.variants.expand`).
    """
    for i, entry in enumerate(spec.agents, start=1):
        try:
            check_agent(entry)
        except AutoVendError as exc:
            raise ConfigError(f"agents, entry {i} ({entry.agent}): {exc}") from None
    identities = {a.label: agent_identity(a) for a in spec.agents}
    tasks = plan(spec, out_dir, world_facts(spec, known))
    states: dict[str, FolderState] = {}
    conflicts = []
    prior = 0.0
    for t in tasks:
        state, conflict = folder_status(t, identities[t.agent.label])
        if conflict is not None:
            conflicts.append(conflict)
        states[t.name] = state
        if state == "finished":
            row = read_result(t, out_dir)
            if row is not None and row.api_cost_usd is not None:
                prior += row.api_cost_usd
    if conflicts:
        raise ConfigError(
            "the output folder holds finished runs that do not match the spec (nothing was run or deleted):\n"
            + "\n".join(f"  - {c}" for c in conflicts)
            + "\nuse another --out, or move these folders away"
        )
    return SweepPlan(tuple(tasks), states, prior)


def check_and_plan(
    spec: SweepSpec, out_dir: str | Path, *, force: bool = False, inputs: tuple[str | Path | None, ...] = ()
) -> SweepPlan:
    """The output folder's rule (`autovend.sweep.folder`), then `make_plan`; reads only (`sweep --dry-run`).

    The plan covers the spec's world variants (`autovend.sweep.variants.expand`, derived and drawn in memory).
    """
    check_sweep_folder(out_dir, force=force, inputs=(*inputs, *world_inputs(spec)))
    expanded, known, _ = expand_variants(spec, out_dir)
    return make_plan(expanded, out_dir, known)


def _failure(future: Any) -> str:
    """Why a Dask future ended in error, in words."""
    from distributed import KilledWorker

    exc = future.exception()
    if isinstance(exc, KilledWorker):
        return f"its worker died on every attempt ({exc}); look at the workers' logs (memory?)"
    return f"{type(exc).__name__}: {exc}"


class _Gate:
    """Submits runs of a limited provider no faster than its limit allows; the rest are held by the client."""

    def __init__(self, limits: dict[str, int]) -> None:
        self.limits = limits
        self.running: dict[str, int] = dict.fromkeys(limits, 0)
        self.held: dict[str, collections.deque[RunTask]] = {p: collections.deque() for p in limits}

    def admit(self, task: RunTask) -> bool:
        """True if `task` may be submitted now (and count it); else hold it."""
        p = task.agent.provider_key
        if p is None or p not in self.limits:
            return True
        if self.running[p] < self.limits[p]:
            self.running[p] += 1
            return True
        self.held[p].append(task)
        return False

    def release(self, task: RunTask) -> RunTask | None:
        """`task` has ended: the next held run of its provider, if any (counted as submitted)."""
        p = task.agent.provider_key
        if p is None or p not in self.limits:
            return None
        self.running[p] -= 1
        if self.held[p]:
            self.running[p] += 1
            return self.held[p].popleft()
        return None

    def drop(self) -> list[RunTask]:
        """Every held run (they will not be submitted)."""
        out = [t for q in self.held.values() for t in q]
        for q in self.held.values():
            q.clear()
        return out


@dataclass
class Watched:
    """What `submit_and_watch` saw: outcomes and failures by run, and why it stopped early (if it did)."""

    outcomes: dict[str, TaskOutcome] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)  # run name -> why it failed
    cost_stopped: bool = False  # the cost limit was reached: runs not started were skipped
    interrupted: bool = False  # Ctrl-C: the runs under way were stopped (resumable), none was started


def submit_and_watch(
    client: Any,
    todo: list[RunTask],
    tracker: Tracker,
    *,
    limits: dict[str, int],
    max_cost_usd: float | None,
    retries: int,
    on_update: Callable[[SweepStatus], None] | None = None,
) -> Watched:
    """Submit `todo` and follow it to the end (or to Ctrl-C): the outcomes, the failures, why it stopped early.

    Runs of a provider with a limit are submitted as earlier ones end, no more at once than the
    limit; once the cost limit is reached the held runs are not submitted and the tasks not started
    yet return at once (`skipped`). On KeyboardInterrupt the stop flag says "interrupt": tasks not started
    return at once and the runs under way are stopped by their tasks (`autovend.sweep.process`); they are
    waited for at most `INTERRUPT_WAIT_S` (a second Ctrl-C waits no more), so the sweep ends within seconds.
    """
    from distributed import Variable, wait

    sweep_id = uuid.uuid4().hex[:12]
    channel = Channel(topic=f"autovend-sweep-{sweep_id}", stop=f"autovend-sweep-stop-{sweep_id}", limits=dict(limits))
    events: queue.Queue[Any] = queue.Queue()
    client.subscribe_topic(channel.topic, events.put)
    stop = Variable(channel.stop, client=client)
    stop.set(False)
    gate = _Gate(dict(limits))
    futures: dict[Any, RunTask] = {}
    seen = Watched()

    def submit(task: RunTask) -> Any:
        future = client.submit(execute, task, channel, key=f"{task.name}#{sweep_id}", retries=retries, pure=False)
        futures[future] = task
        return future

    def record(f: Any) -> None:
        task = futures[f]
        out = f.result() if f.status == "finished" else TaskOutcome(task.name, "failed", error=_failure(f))
        seen.outcomes[task.name] = out
        if out.status == "failed":
            seen.failures[task.name] = out.error or "failed"
        tracker.outcome(task.name, out.status)

    def drop_held() -> None:
        for t in gate.drop():
            seen.outcomes[t.name] = TaskOutcome(t.name, "skipped")
            tracker.outcome(t.name, "skipped")

    for t in todo:
        if gate.admit(t):
            submit(t)
    pending = set(futures)
    try:
        while pending:
            try:
                done, pending = wait(pending, timeout=POLL_S, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done = set()
            while True:
                try:
                    _, msg = events.get_nowait()
                except queue.Empty:
                    break
                tracker.event(msg)
            for f in done:
                record(f)
                after = gate.release(futures[f])
                if after is not None:  # nothing is held once the cost limit is reached
                    pending.add(submit(after))
            if max_cost_usd is not None and not seen.cost_stopped and tracker.cost_usd >= max_cost_usd:
                stop.set(STOP_COST)
                seen.cost_stopped = True
                drop_held()
            if on_update is not None:
                on_update(tracker.status())
    except KeyboardInterrupt:
        seen.interrupted = True
        stop.set(STOP_INTERRUPT)  # tasks not started return; the runs under way are stopped by their tasks
        drop_held()
        with contextlib.suppress(TimeoutError, KeyboardInterrupt):  # a second Ctrl-C waits no more
            wait(pending, timeout=INTERRUPT_WAIT_S)
        for f in [f for f in pending if f.done()]:
            record(f)
            pending.discard(f)
    finally:
        client.cancel(list(pending))
        client.unsubscribe_topic(channel.topic)
        with contextlib.suppress(Exception):
            stop.delete()
    return seen


def collect(sweep: SweepPlan, out_dir: str | Path) -> tuple[list[ResultRow], list[str]]:
    """The rows of the spec's finished and timed-out runs (spec order), and the runs without a result.

    A timed-out run is among the runs without a result too, with why it stopped.
    """
    rows, missing = [], []
    for t in sweep.tasks:
        row = read_result(t, out_dir)
        if row is not None:
            rows.append(row)
        if row is None or not row.finished:
            missing.append(t.name if row is None else f"{t.name} (timed out: {row.note})")
    return rows, missing


def run_sweep(
    spec: SweepSpec,
    out_dir: str | Path,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    max_cost_usd: float | None = None,
    retries: int = DEFAULT_RETRIES,
    on_plan: Callable[[SweepPlan], None] | None = None,
    on_start: Callable[[str], None] | None = None,
    on_update: Callable[[SweepStatus], None] | None = None,
    force: bool = False,
    inputs: tuple[str | Path | None, ...] = (),
) -> SweepOutcome:
    """Run what is missing of `spec` into `out_dir`, then write results.csv and the leaderboards (module docstring).

    `out_dir` must be absent, empty or an earlier sweep's folder unless `force`, and never is, holds or lies in
    one of `inputs` or of the spec's worlds (`autovend.sweep.folder`).

    on_plan: called with the plan before anything runs; on_start: with the cluster's description
    once connected; on_update: with the sweep's status about twice a second while it runs.
    """
    out = Path(out_dir)
    sweep = check_and_plan(spec, out, force=force, inputs=inputs)
    mark_sweep_folder(out)
    variants = write_variants(spec, out)  # the variants' bundles, before any run needs them
    if on_plan is not None:
        on_plan(sweep)
    todo = sweep.todo
    tracker = Tracker(
        {t.name: t.days for t in todo},
        finished_before=sweep.count("finished"),
        prior_cost=sweep.prior_cost_usd,
        total=len(sweep.tasks),
    )
    seen = Watched(cost_stopped=max_cost_usd is not None and bool(todo) and sweep.prior_cost_usd >= max_cost_usd)
    cluster = None
    if todo and not seen.cost_stopped:
        out.mkdir(parents=True, exist_ok=True)
        with connect(scheduler, workers, len(todo)) as (client, cluster):
            if on_start is not None:
                on_start(cluster)
            seen = submit_and_watch(
                client,
                todo,
                tracker,
                limits=spec.limits,
                max_cost_usd=max_cost_usd,
                retries=retries,
                on_update=on_update,
            )
    if not seen.interrupted:  # after Ctrl-C the leaderboard is written at once, from what was already verified
        for task in sweep.tasks:  # runs finished before (or copied in) were not submitted: replay them if need be
            if sweep.states[task.name] == "finished":
                verify_once(task)  # nothing when this sweep's record of its replay still holds
    listed, missing = collect(sweep, out)  # what finished is written even after Ctrl-C
    rows = [r for r in listed if r.finished]
    standing = dict(zip((r.run_dir for r in rows), standing_cells(rows), strict=True))
    out.mkdir(parents=True, exist_ok=True)
    results = write_results(listed, out, [standing.get(r.run_dir, (None, None, None)) for r in listed])
    write_paired(rows, out)
    summary = write_robustness(rows, out, variants) if variants else ""
    board = write_leaderboard(rows, out, missing, len(sweep.tasks), extra=summary)
    board_html = write_leaderboard_html(rows, out, missing, len(sweep.tasks))
    return SweepOutcome(
        plan=sweep,
        outcomes=seen.outcomes,
        failures=seen.failures,
        cost_usd=tracker.cost_usd,
        cost_stopped=seen.cost_stopped,
        rows=tuple(rows),
        results_path=results,
        leaderboard_path=board,
        leaderboard_html_path=board_html,
        cluster=cluster,
        interrupted=seen.interrupted,
    )

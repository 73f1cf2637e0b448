"""The runs of a sweep: one `RunTask` per (world, agent, seed), its run folder, and the function a worker runs.

    tasks = plan(spec, out_dir, worlds)          # worlds: label -> WorldFacts (hash and horizon)
    status = folder_status(task, identity)       # new / unfinished / finished, or a conflict
    outcome = execute(task, channel)             # on a Dask worker: `run_episode(..., resume=True)`

A run's folder is `OUT/runs/<world>/<agent>-s<seed>-d<days>`. `execute` runs it in a process of its own
(`autovend.sweep.process`, `autovend.sweep.child`: a time limit, a stop, and a process that dies take only
that run), where it is `autovend run` with the same arguments (the same agent builder and `run_episode`,
`run_task`), except that it always resumes (a finished run is left as it is, an interrupted one continues
from its checkpoint, a folder without a checkpoint starts afresh) and writes its checkpoints in the run's
process (`sync`), every `AgentEntry.checkpoint_days` days. A run stopped by the spec's `timeout_s` comes back
"timed_out" and leaves RUN/timed_out.json (removed when the run is tried again). A finished run is then re-checked
on the worker (`autovend verify`: replayed from its folder) and the outcome kept in RUN/verify.json and in the
sweep's own record OUT/verified/<world>/<run>.json (`verification_record`), which results.csv and the leaderboards
show as `verified` (a run finished earlier, or copied in, without a record of this sweep is checked when
the sweep comes back to it). Problems that a retry cannot
fix (a bad config, a checkpoint of another run) come back as a failed outcome; anything else is
raised, so Dask retries the task, which then resumes from the last checkpoint.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from autovend.agents.plugins import is_plugin_file
from autovend.errors import AutoVendError, BundleError, CheckpointError, ConfigError, OutputExistsError
from autovend.io import atomic_write_text
from autovend.runner import CHECKPOINT_DIR, CHECKPOINT_FILE, RUN_FILE, DayProgress, is_finished, run_episode
from autovend.shipped import AGENT_CONFIGS, resolve_shipped
from autovend.sweep.agents import build_agent
from autovend.sweep.spec import LLM_PREFIX, AgentEntry, SweepSpec

if TYPE_CHECKING:
    from autovend.agents.base import Agent

log = logging.getLogger(__name__)

RUNS_DIR = "runs"
STOP_COST, STOP_INTERRUPT = "cost", "interrupt"  # the values of the client's stop flag
VERIFIED_DIR = "verified"  # the sweep's own records of the replays it made (`verification_record`)
# errors a retry would only repeat: reported as a failed run at once
PERMANENT_ERRORS: tuple[type[AutoVendError], ...] = (ConfigError, CheckpointError, OutputExistsError, BundleError)

FolderState = Literal["new", "unfinished", "finished"]
# ran: finished now; finished: before; skipped: the cost limit; failed; timed_out: stopped by the time limit;
# interrupted: stopped because the sweep was interrupted (Ctrl-C). The last two leave the run resumable.
OutcomeStatus = Literal["ran", "finished", "skipped", "failed", "timed_out", "interrupted"]
TIMED_OUT_FILE = "timed_out.json"  # in a run folder: the run was stopped by the sweep's time limit (the last try)


@dataclass(frozen=True)
class WorldFacts:
    """What the client reads of a world bundle once: its absolute folder, hash and horizon."""

    path: str
    world_hash: str
    horizon_days: int


@dataclass(frozen=True)
class AgentIdentity:
    """What run.json records of an agent: its name and configuration (None: not known before it runs)."""

    name: str
    config: dict[str, Any] | None = None


@dataclass(frozen=True)
class RunTask:
    """One run of a sweep, with absolute paths (workers may have another working directory)."""

    world: str  # the world's label
    world_path: str
    world_hash: str
    agent: AgentEntry  # config and prices as absolute paths
    seed: int
    days: int
    run_dir: str
    timeout_s: float | None = None  # the spec's time limit of one run in one invocation
    horizon_days: int = 0  # the world's horizon (0: not known)

    @property
    def name(self) -> str:
        """The run's name: `<world>/<agent>-s<seed>-d<days>` (its folder below OUT/runs)."""
        return f"{self.world}/{self.agent.label}-s{self.seed}-d{self.days}"


def task_to_json(task: RunTask) -> dict[str, Any]:
    """The task as JSON values, for the run's own process (`autovend.sweep.child`)."""
    return {**{f: getattr(task, f) for f in RunTask.__dataclass_fields__}, "agent": task.agent.model_dump(mode="json")}


def task_from_json(data: dict[str, Any]) -> RunTask:
    """The task `task_to_json` wrote."""
    return RunTask(**{**data, "agent": AgentEntry.model_validate(data["agent"])})


@dataclass(frozen=True)
class Channel:
    """How tasks talk to the client: the event topic, the stop flag's name, per-provider limits."""

    topic: str
    stop: str
    limits: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskOutcome:
    """What a task returns: `ran` (finished now), `finished` (before), `skipped` (cost limit), `failed`."""

    name: str
    status: OutcomeStatus
    resumed_from: int | None = None
    error: str | None = None


def _absolute(path: Path | None) -> Path | None:
    return None if path is None else path.resolve()


def _absolute_plugin(spec: str) -> str:
    """A plugin `FILE.py:Class` with the file's absolute path (other agent strings unchanged)."""
    if spec.startswith(LLM_PREFIX) or ":" not in spec:
        return spec
    target, attr = spec.rsplit(":", 1)
    return f"{Path(target).resolve()}:{attr}" if is_plugin_file(target) else spec


def plan(spec: SweepSpec, out_dir: str | Path, worlds: dict[str, WorldFacts]) -> list[RunTask]:
    """The runs of `spec` in spec order (worlds, then agents, then seeds); `worlds` maps world labels to facts."""
    out = Path(out_dir).resolve() / RUNS_DIR
    tasks = []
    for w in spec.worlds:
        facts = worlds[w.label]
        days = spec.days if spec.days is not None else facts.horizon_days
        if days > facts.horizon_days:
            raise ConfigError(
                f"days: {days} is longer than the horizon of world {w.label} ({facts.horizon_days} days); "
                f"give at most {facts.horizon_days}"
            )
        for a in spec.agents:
            config = None if a.config is None else resolve_shipped(a.config, AGENT_CONFIGS)  # a file or a name
            update = {"config": _absolute(config), "prices": _absolute(a.prices), "agent": _absolute_plugin(a.agent)}
            agent = a.model_copy(update=update)
            for seed in spec.seeds:
                name = f"{a.label}-s{seed}-d{days}"
                run_dir = str(out / w.label / name)
                task = RunTask(w.label, facts.path, facts.world_hash, agent, seed, days, run_dir, spec.timeout_s)
                tasks.append(dataclasses.replace(task, horizon_days=facts.horizon_days))
    return tasks


def read_run_json(run_dir: str | Path) -> dict[str, Any] | None:
    """The run.json of a folder, or None when there is none (or it cannot be read)."""
    try:
        meta = json.loads((Path(run_dir) / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return meta if isinstance(meta, dict) else None


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=str)


def folder_status(task: RunTask, identity: AgentIdentity | None = None) -> tuple[FolderState, str | None]:
    """The state of the task's run folder, and why a finished run there is not this task's (None if it is).

    A finished run must match the task: agent (name and, when `identity` knows it, configuration),
    seed, world hash and days; a folder that does not match is never touched.
    """
    run_dir = Path(task.run_dir)
    meta = read_run_json(run_dir)
    if meta is not None and meta.get("finished"):
        want = {"seed": task.seed, "world_hash": task.world_hash, "days": task.days}
        if identity is not None:
            want["agent"] = identity.name
        diff = [f"{k} {meta.get(k)!r} (the spec: {v!r})" for k, v in want.items() if meta.get(k) != v]
        config = None if identity is None else identity.config
        if config is not None and _canonical(meta.get("agent_config") or {}) != _canonical(config):
            diff.append("the agent's configuration differs from the spec's config file")
        if diff:
            return "finished", f"{run_dir} holds a finished run of another setting: {'; '.join(diff)}"
        return "finished", None
    if (run_dir / CHECKPOINT_DIR / CHECKPOINT_FILE).exists():
        return "unfinished", None
    return "new", None


# ------------------------------------------------------------------------------------------------ on a worker


def _agent_cost(agent: Agent) -> float | None:
    usage = getattr(agent, "usage", None)
    if not callable(usage):
        return None
    cost = (usage() or {}).get("api_cost_usd")
    return None if cost is None else float(cost)


class _Events:
    """Sends a task's events to the client through the Dask scheduler (no-op outside a worker)."""

    def __init__(self, topic: str, name: str) -> None:
        self.topic, self.name = topic, name
        try:
            from distributed import get_worker

            self._worker: Any = get_worker()
        except ValueError:  # not inside a Dask task
            self._worker = None

    def send(self, kind: str, **fields: Any) -> None:
        if self._worker is not None:
            self._worker.log_event(self.topic, {"run": self.name, "kind": kind, "time": time.time(), **fields})


def _stop_flag(channel: Channel) -> object:
    """The client's stop flag: False, "cost" (cost limit reached) or "interrupt" (the sweep was interrupted)."""
    try:
        from distributed import Variable

        return Variable(channel.stop).get(timeout=10)
    except (RuntimeError, ValueError, TimeoutError):  # not inside a Dask task, or the flag is not there
        return False


def _stopped(channel: Channel) -> bool:
    """True once the client has raised the stop flag (cost limit reached, or interrupted): start no run."""
    return bool(_stop_flag(channel))


def _interrupted(channel: Channel) -> bool:
    """True once the client was interrupted: runs under way stop too."""
    return _stop_flag(channel) == STOP_INTERRUPT


class _Lease:
    """Holds a lease of a named, cluster-wide Dask semaphore (or lock) while a run goes on; no-op outside Dask.

    The leases of a lost worker expire (`distributed.scheduler.locks.lease-timeout`, 30 s by default).
    Waiting holds the worker's thread (seceding would let the worker start another run, which the
    waiting one would then have to wait for while holding its lease); the client submits no more
    runs of a provider than its limit, so a run waits here only for runs of other sweeps on the cluster.
    """

    def __init__(self, name: str | None, max_leases: int = 1) -> None:
        self._sem: Any = None
        if name is None:
            return
        try:
            from distributed import Semaphore, get_worker

            get_worker()
        except ValueError:  # not inside a Dask task
            return
        self._sem = Semaphore(max_leases=max_leases, name=name)

    def __enter__(self) -> _Lease:
        if self._sem is not None:
            self._sem.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._sem is not None:
            self._sem.release()


def provider_lease(provider: str | None, limits: dict[str, int]) -> _Lease:
    """A lease of the provider's concurrency limit (no-op without a limit)."""
    if provider is None or provider not in limits:
        return _Lease(None)
    return _Lease(f"autovend-sweep-provider-{provider}", limits[provider])


def run_lease(run_dir: str | Path) -> _Lease:
    """The run folder's lock: one writer at a time, even when a task thought lost is still running somewhere."""
    return _Lease(f"autovend-sweep-run-{Path(run_dir).resolve()}")


def execute(task: RunTask, channel: Channel) -> TaskOutcome:
    """Run (or resume, or leave as it is) one run of a sweep; see the module docstring."""
    if _stopped(channel):
        return TaskOutcome(task.name, "skipped")
    events = _Events(channel.topic, task.name)
    try:
        with run_lease(task.run_dir), provider_lease(task.agent.provider_key, channel.limits):
            state, conflict = folder_status(task)
            if conflict is not None:
                raise OutputExistsError(conflict)
            if state == "finished":
                verify_once(task)
                return TaskOutcome(task.name, "finished")
            if _stopped(channel):  # the limit may have been reached while waiting for a lease
                return TaskOutcome(task.name, "skipped")
            outcome = _run_in_process(task, channel, events)
            if outcome.status == "ran":
                verify_once(task)
            return outcome
    except PERMANENT_ERRORS as exc:
        events.send("failed", error=str(exc))
        return TaskOutcome(task.name, "failed", error=str(exc))


class RunProcessError(AutoVendError):
    """A run's own process ended without its outcome (it died) or with an error a retry may fix."""


def _run_in_process(task: RunTask, channel: Channel, events: _Events) -> TaskOutcome:
    """Run the task in a process of its own (`autovend.sweep.process`) and turn how it ended into an outcome.

    A permanent error is a failed outcome; another error, or a process that died (os._exit, a crash, killed),
    is raised as `RunProcessError` naming this run, so Dask retries it and it resumes from its checkpoint.
    """
    from autovend.sweep.process import describe_exit, run_child

    marker = Path(task.run_dir) / TIMED_OUT_FILE
    marker.unlink(missing_ok=True)  # a new try: the last one's time-out no longer stands
    result = run_child(
        task_to_json(task),
        on_event=lambda msg: events.send(str(msg.pop("kind", "")), **{k: v for k, v in msg.items() if k != "run"}),
        timeout_s=task.timeout_s,
        stop_asked=lambda: _interrupted(channel),
    )
    if result.ending == "timed_out":
        why = (
            f"stopped after {result.seconds:.0f} s, over the spec's timeout_s of {task.timeout_s:g} s; it resumes from "
            "its last checkpoint when the sweep runs again"
        )
        Path(task.run_dir).mkdir(parents=True, exist_ok=True)
        atomic_write_text(marker, json.dumps({"timeout_s": task.timeout_s, "why": why}, indent=2) + "\n")
        events.send("timed_out", error=why)
        return TaskOutcome(task.name, "timed_out", error=why)
    if result.ending == "stopped":
        return TaskOutcome(task.name, "interrupted", error="stopped: the sweep was interrupted")
    if result.ending == "died":
        raise RunProcessError(
            f"the process of run {task.name} ended with {describe_exit(result.exit_code)} before the run did (the "
            "agent's code called os._exit, crashed the interpreter, or the process was killed, e.g. for memory); "
            "its folder keeps its last checkpoint"
        )
    msg = result.message
    if msg.get("status") == "failed":
        if msg.get("permanent"):  # a config or checkpoint problem a retry would only repeat
            events.send("failed", error=str(msg.get("error")))
            return TaskOutcome(task.name, "failed", error=str(msg.get("error")))
        log.warning("%s failed in its process:\n%s", task.name, msg.get("log", ""))
        raise RunProcessError(f"run {task.name}: {msg.get('error')}")
    if not is_finished(Path(task.run_dir)):  # the outcome line is the run's process's word; its folder must agree
        raise RunProcessError(
            f"the process of run {task.name} said it finished, but its folder holds no finished run; it resumes "
            "from its last checkpoint"
        )
    return TaskOutcome(task.name, "ran", resumed_from=msg.get("resumed_from"))


def verification_record(task: RunTask) -> Path:
    """Where the sweep keeps the record of its replay of the task's run: OUT/verified/<world>/<run>.json.

    Outside the run folder: a run copied in from elsewhere may hold a verify.json of its own, which is only the
    folder's word; a leaderboard says "verified" only for a replay this sweep made (and the files it compared).
    """
    run_dir = Path(task.run_dir)
    return run_dir.parents[2] / VERIFIED_DIR / run_dir.parent.name / f"{run_dir.name}.json"


def verify_once(task: RunTask) -> None:
    """Replay the task's finished run (`autovend verify`) unless the sweep's record of its replay still holds."""
    from autovend.evaluation.verify import record_verification, recorded_verification, verify_run

    record = verification_record(task)
    if recorded_verification(task.run_dir, record) is not None:
        return  # replayed by this sweep, and no compared file has changed since
    try:
        result = verify_run(task.run_dir, task.world_path)
    except AutoVendError as exc:  # a folder verify cannot read: left unverified, the run itself stands
        log.warning("%s could not be verified: %s", task.name, exc)
        return
    record_verification(task.run_dir, result, also=record)


def run_task(task: RunTask, events: Any) -> TaskOutcome:
    """`autovend run` of the task, resuming from the folder's checkpoint if there is one (in the run's process).

    events: where the run's events go (`send(kind, **fields)`).
    """
    from autovend.world.bundle import load_world

    world = load_world(task.world_path)
    if world.world_hash != task.world_hash:
        raise BundleError(
            f"the world at {task.world_path} changed during the sweep (hash {world.world_hash[:12]}, was "
            f"{task.world_hash[:12]}); run the sweep again"
        )
    agent = build_agent(task.agent, task.world_path, task.seed)
    events.send("start", days=task.days)

    def on_day(p: DayProgress) -> None:
        events.send("day", day=p.day, days=p.days, net_assets=p.net_assets, cost=_agent_cost(agent))

    summary = run_episode(
        world,
        agent,
        task.seed,
        days=task.days,
        out_dir=task.run_dir,
        resume=True,
        progress=on_day,
        world_path=task.world_path,
        checkpoint="sync",
        evaluate=True,
        checkpoint_every=task.agent.checkpoint_days,
    )
    events.send("end", cost=_agent_cost(agent))
    return TaskOutcome(task.name, "ran", resumed_from=summary.resumed_from)

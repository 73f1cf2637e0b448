"""Running an agent through an episode into a run folder: a checkpoint after every day, and resume.

    summary = run_episode(world, agent, seed=1, days=180)           # into runs/<world>/<agent>-s1 (runs/cn20/...)
    summary = run_episode(world, make_agent("baseline", 1), seed=1, out_dir="runs/cn20/baseline-s1", resume=True)

The run folder holds what `autovend.evaluation` reads (run.json, trajectory.jsonl, records.sqlite,
hidden.sqlite, daily.csv, then metrics.json, report.md, report.html and figures) and, while the run is under
way, `checkpoint/checkpoint.pkl`: the ToolSession (simulator, records, notebook, call counters),
the agent's `state_dict()`, the completed day and the trajectory's length in bytes at that moment.

A resumed run loads the last checkpoint, cuts the trajectory back to that length (dropping the
calls of a day that was under way when the run stopped), restores the agent with `load_state` and
goes on; since simulator, tools and agents are deterministic, it ends in exactly the state of an
uninterrupted run (the trajectory differs only in wall times).

run.json records the run's provenance (`autovend.provenance`: Python, package versions, the CPU
features numpy used, thread settings) as it was when the run started; the checkpoint carries that
record, so a resumed run keeps it. A resume on another stack goes on (refusing would strand a long
run that may well give the same numbers), but the run is marked: run.json's
`provenance_changes` lists, per resume, the day it resumed from and what differed, and a warning is
logged; `autovend compare` shows these marks.

Checkpoints are written after every completed day. By default (`checkpoint="background"`, on
systems with fork) a forked child writes the snapshot while the run goes on, like a database's
background save: the fork is a copy-on-write picture of the process, so the run waits for no disk
I/O; if the previous snapshot is still being written, that day's snapshot is skipped (a resume then
repeats at most the few days since the last one). `"sync"` writes every checkpoint in the run's
own process; `"off"` writes none. The folder is replaced atomically each time, so an interruption
never leaves a half-written checkpoint.

One process at a time writes a run folder: `run_episode` holds its lock (`autovend.runlock`) from the
first look at the folder to the end, so a second `--resume` (or a console, or a sweep worker) on a folder
still being written stops at once, naming the process that writes it. The agent is held to its protocol
(`autovend.agents.harness`): an `act_day` that does not end its day, ends two, or calls `sys.exit` stops
the run with an `AgentError`; the folder keeps its last checkpoint. Every piece of the agent's code runs inside
`autovend.env.boundary.agent_code`, where the boundary's accessors refuse; the oracle is handed the world by its
class's identity (`autovend.agents.identity.grant_hidden`). run.json records the agent's code identity
(`agent_entry_point`) and `"privileged": true` for the oracle's class only, never for a name.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autovend import __version__
from autovend.agents.harness import HarnessSession, agent_step, settled_days
from autovend.agents.identity import entry_point, grant_hidden, is_privileged
from autovend.checkpoints import (
    CHECKPOINT_DIR,
    CHECKPOINT_FILE,
    Checkpointer,
    CheckpointMode,
    agent_state,
    check_plain_state,
    read_checkpoint,
    write_checkpoint,
)
from autovend.env.boundary import agent_code, episode_of
from autovend.errors import CheckpointError, OutputExistsError, RunFolderError
from autovend.provenance import Provenance, current_provenance, provenance_differences
from autovend.rundir import default_run_dir
from autovend.runlock import hold_run_folder
from autovend.session import ToolSession
from autovend.world.model import World

if TYPE_CHECKING:
    from autovend.agents.base import Agent

log = logging.getLogger(__name__)

TRAJECTORY_FILE = "trajectory.jsonl"
RUN_FILE = "run.json"
# files a run folder may hold; `force` removes only these (and the checkpoint folder)
RUN_OUTPUTS = (
    *(RUN_FILE, TRAJECTORY_FILE, "records.sqlite", "hidden.sqlite", "daily.csv", "metrics.json", "report.md"),
    *("report.html", "net_assets.png", "operations.png", "early_late.png", "llm.jsonl", "llm.discarded.jsonl"),
    *("verify.json", "world.pkl"),  # world.pkl: older versions' copy of the world (never read now)
)
WORLD_DIR = "world"  # the world's bundle a run folder keeps when run.json names none (evaluation.runsave)


@dataclass(frozen=True)
class DayProgress:
    """What the runner reports after each settled day (for progress bars)."""

    day: int  # the day just settled
    days: int  # days the run will settle
    net_assets: float
    cash: float


@dataclass(frozen=True)
class RunSummary:
    """The outcome of `run_episode`."""

    run_dir: Path
    agent: str
    seed: int
    days: int  # days settled
    final_net_assets: float  # at the close of the last settled day
    final_cash: float
    wall_time_s: float  # over all sessions of the run (resumed runs add up)
    resumed_from: int | None  # the checkpoint day a resumed run started from, None for a fresh run
    checkpoints_written: int
    checkpoints_skipped: int
    metrics: dict[str, Any] | None = field(default=None, repr=False)
    currency: str = ""  # the world's: what the money above is in


# ------------------------------------------------------------------------------------------------ run folder


def is_finished(run_dir: Path) -> bool:
    """True if `run_dir` holds a run that `run_episode` finished."""
    try:
        meta = json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    return bool(meta.get("finished"))


def clear_run_folder(run_dir: Path) -> None:
    """Remove a run's files (only the names a run writes, and the checkpoint folder) from `run_dir`."""
    for name in RUN_OUTPUTS:
        with contextlib.suppress(FileNotFoundError):
            (run_dir / name).unlink()
    shutil.rmtree(run_dir / CHECKPOINT_DIR, ignore_errors=True)
    if (run_dir / WORLD_DIR / "manifest.json").is_file() and not (run_dir / WORLD_DIR).is_symlink():
        shutil.rmtree(run_dir / WORLD_DIR, ignore_errors=True)  # the world's copy a run wrote (a bundle)


def _prepare(run_dir: Path, resume: bool, force: bool) -> Path | None:
    """Check the folder against the flags; return the checkpoint to resume from, if any."""
    ckpt = run_dir / CHECKPOINT_DIR / CHECKPOINT_FILE
    if force:
        clear_run_folder(run_dir)
        return None
    if is_finished(run_dir):
        raise OutputExistsError(
            f"{run_dir} holds a finished run; choose another --out, or pass --force to run it again"
        )
    if resume:
        if ckpt.exists():
            return ckpt
        if not [name for name in RUN_OUTPUTS if name != TRAJECTORY_FILE and (run_dir / name).exists()]:
            clear_run_folder(run_dir)  # stopped before its first checkpoint: only its trajectory to drop
            return None
    if ckpt.exists():
        raise OutputExistsError(
            f"{run_dir} holds an unfinished run (checkpoint of day {_checkpoint_day(ckpt)}); continue it with "
            "--resume, or pass --force to start again"
        )
    leftovers = [name for name in (*RUN_OUTPUTS, WORLD_DIR) if (run_dir / name).exists()]
    if leftovers:
        raise OutputExistsError(
            f"{run_dir} already holds run files ({', '.join(leftovers)}); choose another --out, or pass --force"
        )
    return None


def _checkpoint_day(path: Path) -> int | str:
    try:
        return int(read_checkpoint(path)["day"])
    except (CheckpointError, KeyError, ValueError):
        return "?"


def _agent_config(agent: Agent) -> dict[str, Any]:
    cfg = getattr(agent, "config", None)
    dump = getattr(cfg, "model_dump", None)
    return dump(mode="json") if callable(dump) else {}


def _agent_usage(agent: Agent) -> tuple[dict[str, Any], float | None]:
    usage = getattr(agent, "usage", None)
    if not callable(usage):
        return {}, None
    info = dict(usage() or {})
    cost = info.pop("api_cost_usd", None)
    return info, None if cost is None else float(cost)


# ------------------------------------------------------------------------------------------------ the episode


def run_episode(
    world: World,
    agent: Agent,
    seed: int,
    days: int | None = None,
    out_dir: str | Path | None = None,
    resume: bool = False,
    progress: Callable[[DayProgress], None] | None = None,
    *,
    force: bool = False,
    world_path: str | Path | None = None,
    checkpoint: CheckpointMode = "background",
    evaluate: bool = True,
    checkpoint_every: int = 1,
) -> RunSummary:
    """Run `agent` on `world` with `seed` for `days` days (default: the world's horizon) into `out_dir`.

    out_dir: the run folder, default `default_run_dir` (runs/<world>/<agent>-s<seed>).

    resume: continue from the folder's checkpoint (a fresh start if there is none). force: remove a
    previous run's files first. progress: called after every settled day. world_path: the bundle
    folder, recorded in run.json so the run can be reloaded (without it the world is saved in the
    folder as a bundle of data files, `world/`, so any run can be reloaded and compared). evaluate: write
    metrics.json, report.md, report.html and figures at the end. checkpoint_every: checkpoint only after the
    days that are multiples of it (a resume repeats at most checkpoint_every - 1 days; `autovend sweep` uses it
    where a checkpoint costs more than the days it saves). Raises `OutputExistsError` for a folder holding a finished or
    unfinished run that the flags do not allow to touch, `CheckpointError` for a checkpoint of another
    agent, seed or world.
    """
    run_dir = Path(out_dir) if out_dir is not None else default_run_dir(world.name, agent.name, seed)
    if run_dir.exists() and not run_dir.is_dir():
        raise OutputExistsError(f"{run_dir} is a file, not a run folder; choose another --out")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunFolderError(
            f"cannot make the run folder {run_dir}: {exc.strerror or exc}; choose another --out"
        ) from exc
    horizon = world.horizon_days
    days = horizon if days is None else int(days)
    if not 1 <= days <= horizon:
        raise ValueError(f"days must be between 1 and the world's horizon {horizon}, got {days}")
    if checkpoint_every < 1:
        raise ValueError(f"checkpoint_every must be at least 1, got {checkpoint_every}")
    with hold_run_folder(run_dir) as lock:
        if lock.stale is not None:
            log.warning("%s: %s", run_dir, lock.stale)
        ckpt_path = run_dir / CHECKPOINT_DIR / CHECKPOINT_FILE
        traj_path = run_dir / TRAJECTORY_FILE
        start_from = _prepare(run_dir, resume, force)
        previous_wall = 0.0
        resumed_from: int | None = None
        if start_from is not None:
            payload = read_checkpoint(start_from)
            _check_same_run(payload, world, agent, seed, start_from)
            _truncate(traj_path, int(payload["trajectory_bytes"]))
            with tempfile.TemporaryDirectory() as tmp:
                sess_file = Path(tmp) / "session.ckpt"
                sess_file.write_bytes(payload["session"])
                session = HarnessSession.load(sess_file, world, trajectory_path=traj_path)
            state = agent_state(payload, agent, start_from)
            with agent_code(session):  # the agent's own code: the boundary's accessors refuse in it
                agent.load_state(state)
            previous_wall = float(payload.get("wall_time_s", 0.0))
            resumed_from = int(payload["day"])
            provenance, changes = _resumed_provenance(payload, run_dir)
        else:
            traj_path.unlink(missing_ok=True)
            session = HarnessSession(world, seed=seed, trajectory_path=traj_path)
            provenance, changes = current_provenance().to_json(), []
        grant_hidden(agent, world)  # the oracle, by its class's identity: the one agent given the hidden model
        checkpointer = Checkpointer(ckpt_path, checkpoint)
        t0 = time.perf_counter()
        identity = {"agent": agent.name, "seed": int(seed), "world_name": world.name, "world_hash": world.world_hash}
        record = {"provenance": provenance, "provenance_changes": changes}
        try:
            if start_from is None:
                agent_step(agent, session, "start")
            while not session.done and settled_days(session) < days:
                agent_step(agent, session, "act_day")
                day = settled_days(session)
                meta = {
                    **identity,
                    "day": day,
                    "trajectory_bytes": traj_path.stat().st_size,
                    "wall_time_s": previous_wall + time.perf_counter() - t0,
                    "autovend_version": __version__,
                    **record,
                }
                # the agent's state is taken where the checkpoint is written: in a forked child that is the
                # snapshot of this moment, so the run itself pays neither the copy nor the pickling
                if day % checkpoint_every == 0:
                    if checkpointer.mode != "off" and checkpointer.written + checkpointer.skipped == 0:
                        with agent_code(session):
                            check_plain_state(agent)  # once, here: a state a resume could not read fails now

                    def write(path: Path, mt: dict[str, Any] = meta) -> None:
                        with agent_code(session):
                            state = agent.state_dict()
                        write_checkpoint(path, session, state, mt)

                    checkpointer.save(day, write)
                if progress is not None:
                    bal = _closing_balance(session)
                    progress(DayProgress(day, days, bal.net_assets, bal.cash))
            checkpointer.wait()
            wall = previous_wall + time.perf_counter() - t0
            usage, cost = _agent_usage(agent)
            meta = {
                "agent": agent.name,
                "agent_config": _agent_config(agent),
                "agent_entry_point": entry_point(agent),
                **({"privileged": True} if is_privileged(agent) else {}),  # the oracle's own class, never a name
                "world_path": None if world_path is None else str(world_path),
                "token_usage": usage,
                "api_cost_usd": cost,
                "wall_time_s": round(wall, 3),
                "days_requested": days,
                "resumed_from_day": resumed_from,
                "evaluated": bool(evaluate),
                **record,
                "checkpoints": {
                    "mode": checkpointer.mode,
                    "written": checkpointer.written,
                    "skipped": checkpointer.skipped,
                },
            }
            metrics = _finish(session, run_dir, world, meta, evaluate)
        finally:
            checkpointer.wait()
            session.close()
        shutil.rmtree(run_dir / CHECKPOINT_DIR, ignore_errors=True)
        bal = _closing_balance(session)
        return RunSummary(
            run_dir=run_dir,
            agent=agent.name,
            seed=int(seed),
            days=settled_days(session),
            final_net_assets=bal.net_assets,
            final_cash=bal.cash,
            wall_time_s=wall,
            resumed_from=resumed_from,
            checkpoints_written=checkpointer.written,
            checkpoints_skipped=checkpointer.skipped,
            metrics=metrics,
            currency=world.economics.currency,
        )


def _closing_balance(session: ToolSession) -> Any:
    """The balance at the close of the last settled day (before the next day's rent and fee)."""
    sim = episode_of(session).sim
    reports = sim.reports
    return reports[-1].balance if reports else sim.balance()


def _check_same_run(payload: dict[str, Any], world: World, agent: Agent, seed: int, path: Path) -> None:
    want = {"agent": agent.name, "seed": int(seed), "world_name": world.name, "world_hash": world.world_hash}
    diff = [f"{k} {payload.get(k)!r} (now {v!r})" for k, v in want.items() if payload.get(k) != v]
    if diff:
        raise CheckpointError(
            f"the checkpoint {path} belongs to another run: {', '.join(diff)}; resume with the same world, agent "
            "and seed, or pass --force to start again"
        )


def _resumed_provenance(payload: dict[str, Any], run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The run's original provenance record and its changes so far, plus this resume's if the stack differs."""
    day = int(payload["day"])
    here = current_provenance()
    changes = list(payload.get("provenance_changes") or [])
    try:
        before = Provenance.from_json(payload["provenance"])
    except (KeyError, ValueError):  # a checkpoint written before provenance was recorded
        differences = [f"days 1-{day} ran on a stack that was not recorded"]
        warning = f"resumed from day {day}; {differences[0]} (the record is that of days {day + 1}+)"
        original = here.to_json()
    else:
        differences = provenance_differences(before, here)
        warning = f"resumed from day {day} with another stack: {'; '.join(differences)}; days {day + 1}+ ran with it"
        original = before.to_json()
    if differences:
        log.warning("%s: %s", run_dir, warning)
        changes.append({"resumed_from_day": day, "differences": differences, "warning": warning})
    return original, changes


def _truncate(path: Path, size: int) -> None:
    """Cut the trajectory back to `size` bytes (the calls of an unfinished day go)."""
    if not path.exists():
        raise CheckpointError(f"the checkpoint needs {path}, which is missing; start the run again with --force")
    if path.stat().st_size < size:
        raise CheckpointError(
            f"{path} is shorter than at the checkpoint ({path.stat().st_size} < {size} bytes); start again with --force"
        )
    with path.open("r+b") as fh:
        fh.truncate(size)


def _finish(
    session: ToolSession, run_dir: Path, world: World, meta: dict[str, Any], evaluate: bool
) -> dict[str, Any] | None:
    """Write the run folder and, if asked, metrics, report and figures; run.json is marked finished last."""
    from autovend.evaluation import RunData, save_run_data, write_run_outputs

    save_run_data(session, run_dir, {**meta, "finished": False})
    metrics = None
    if evaluate:
        metrics = write_run_outputs(RunData.load(run_dir, world=world), run_dir)
    path = run_dir / RUN_FILE
    info = json.loads(path.read_text(encoding="utf-8"))
    info["finished"] = True
    mode = path.stat().st_mode & 0o777
    fd, tmp = tempfile.mkstemp(prefix=f".{RUN_FILE}.", dir=run_dir)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(info, indent=2, ensure_ascii=False, default=str) + "\n")
    os.chmod(tmp, mode)
    os.replace(tmp, path)
    return metrics

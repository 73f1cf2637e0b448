"""One outside player feeding the runner: `OutsidePlay` runs `run_episode` on a thread, its agent fed by a queue.

Calls made on other threads (a person in the web console, MCP clients) play the episode through it.

    play = OutsidePlay(world, OutsideAgent("human"), seed=1, out_dir="runs/me-s1", days=30).start()
    play.submit(lambda s: s.call("get_warehouse", {}))   # runs on the runner's thread, in order; its value
    play.submit(lambda s: s.call("end_day", {}))         # answered once the day is settled and checkpointed
    play.close()                                         # stop; the folder keeps its last checkpoint

The episode is an ordinary `autovend.runner.run_episode`: the run folder is exactly what `autovend run` writes
for any agent (run.json, trajectory.jsonl, records, daily.csv, a checkpoint after every settled day, and after
the last day metrics.json, report.md, report.html and figures), resumed from its checkpoint with `resume`.
The agent (`OutsideAgent`, named as the door wants run.json to say) carries out the submitted jobs on the
runner's session one at a time. A job that settles the day ends the agent's day; its answer is held back until
the runner comes back for the next day (the day's checkpoint written) or, after the last day, has returned (the
run scored), so whoever has that answer knows the day is kept. Checkpoints are written in the runner's thread
(`checkpoint="sync"`: a process with threads must not fork).

`submit` raises `RunEnded` once the runner has returned (finished, or stopped on an error: `failure`) or the
play is closed; a job that raises hands its exception to its caller, and the day goes on (`OutsideAgent.
stop_on_error` stops the run instead). `close` stops the runner at its next job and waits for its thread.
The doors: `autovend.console.episode` (a person's episode) and `autovend.mcp.play` (a scored MCP play).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autovend.env.boundary import _episode
from autovend.errors import AutoVendError
from autovend.runner import RunSummary, run_episode
from autovend.session import ToolSession
from autovend.world.model import World

log = logging.getLogger(__name__)

POLL_S = 0.05  # how often a waiting caller looks at the runner (it sleeps in between)


class RunEnded(AutoVendError):
    """A job submitted after the runner has returned, or after the play was closed."""


class Stopped(Exception):
    """Raised inside the runner's thread to stop the episode (`OutsidePlay.close`)."""


@dataclass
class Job:
    """One piece of work for the runner's thread: a function of the session, and where its value goes."""

    run: Callable[[ToolSession], Any]
    answer: Future[Any] = field(default_factory=Future)


_STOP = None  # the job that stops the runner


class OutsideAgent:
    """The agent `run_episode` drives for an `OutsidePlay`: each day it carries out the jobs that arrive.

    A door subclasses it to keep something of the run (`day_settled`, `state_dict`/`load_state`, a `config`
    for run.json). `last_day` and `scoring` are set by the play: settling the last day takes the `scoring`
    lock (if any) until the runner has returned.
    """

    stop_on_error = False  # a job that raises: its caller gets the error and the day goes on (True: the run stops)

    def __init__(self, name: str) -> None:
        self.name = name
        self.inbox: queue.Queue[Job | None] = queue.Queue()
        self.ready = threading.Event()  # set once the first act_day is reached (the episode is open)
        self.held: Job | None = None  # the job that settled the last day, with its value, answered later
        self.held_value: Any = None
        self.last_day = 0
        self.scoring: threading.Lock | None = None
        self.holds_scoring = False

    # ------------------------------------------------------------------ what the runner calls

    def start(self, session: ToolSession) -> None:
        """Nothing to prepare: the player reads the report."""

    def state_dict(self) -> dict[str, Any]:
        """Nothing to save (a subclass keeps what it needs across a resume)."""
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        """Nothing to restore."""

    def day_settled(self, session: ToolSession) -> None:
        """Called on the runner's thread right after a job settled the day (before the runner checkpoints it)."""

    def act_day(self, session: ToolSession) -> None:
        """Answer the held job, then carry out jobs in order until one settles the day (`Stopped` on a stop)."""
        self.release_held()
        self.ready.set()
        while True:
            job = self.inbox.get()
            if job is _STOP:
                raise Stopped
            settled = _episode(session).settled_days
            try:
                value = job.run(session)
            except BaseException as exc:  # noqa: BLE001 - the caller gets the error
                job.answer.set_exception(exc)
                if self.stop_on_error:
                    raise
                continue
            episode = _episode(session)
            if episode.settled_days == settled:
                job.answer.set_result(value)
                continue
            self.held, self.held_value = job, value
            self.day_settled(session)
            if self.scoring is not None and (episode.settled_days >= self.last_day or episode.sim.done):
                self.scoring.acquire()  # the runner scores the run next
                self.holds_scoring = True
            return

    def release_held(self, change: Callable[[Any], Any] | None = None) -> None:
        """Answer the job that settled the last day (its value passed through `change`, if given)."""
        if self.held is not None:
            job, value = self.held, self.held_value
            self.held, self.held_value = None, None
            job.answer.set_result(change(value) if change is not None else value)


class OutsidePlay:
    """One episode of `agent` into `out_dir`, played by whoever submits jobs (see the module docstring).

    days: days to play (default: the world's horizon). world_path: the bundle folder recorded in run.json.
    resume, force: as `run_episode` takes them. scoring: a lock held from the last day's settling until the
    runner has returned (one scoring at a time in a process). last_answer: changes the value of the job that
    settled the last day, given the runner's summary, before it is answered. evaluate: score the run at the end
    (metrics.json and the reports), as `run_episode` does.
    """

    def __init__(
        self,
        world: World,
        agent: OutsideAgent,
        seed: int,
        out_dir: str | Path,
        *,
        days: int | None = None,
        world_path: str | Path | None = None,
        resume: bool = True,
        force: bool = False,
        scoring: threading.Lock | None = None,
        last_answer: Callable[[Any, RunSummary], Any] | None = None,
        evaluate: bool = True,
    ) -> None:
        self.world = world
        self.agent = agent
        self.seed = int(seed)
        self.run_dir = Path(out_dir)
        self.days = world.horizon_days if days is None else int(days)
        self.world_path = world_path
        self.resume = resume
        self.force = force
        self.last_answer = last_answer
        self.evaluate = evaluate
        agent.last_day, agent.scoring = self.days, scoring
        self.summary: RunSummary | None = None
        self.failure: BaseException | None = None
        self._ended = False  # no job is taken any more (the runner returned, or the play is closing)
        self._returned = threading.Event()  # the runner has returned
        self._lock = threading.Lock()  # orders submit() against the end of the runner and close()
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ life cycle

    def start(self) -> OutsidePlay:
        """Start the runner; return once it waits for the first job, or has returned.

        Raises the runner's error when it stops before the episode opens (a finished run the flags do not
        allow to touch, a checkpoint of another world or seed, ...).
        """
        self._thread = threading.Thread(target=self._run, name=f"autovend-play-{self.run_dir.name}", daemon=True)
        self._thread.start()
        while not (self.agent.ready.wait(POLL_S) or self._returned.is_set()):
            pass
        if self.failure is not None and self.summary is None:
            self._thread.join()
            raise self.failure
        return self

    def _run(self) -> None:
        try:
            self.summary = run_episode(
                self.world,
                self.agent,
                self.seed,
                days=self.days,
                out_dir=self.run_dir,
                resume=self.resume,
                force=self.force,
                world_path=self.world_path,
                checkpoint="sync",  # threads and fork do not mix; a day's checkpoint is written before its answer
                evaluate=self.evaluate,
            )
        except Stopped:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the door (start() raises it before the episode opens)
            if self.agent.ready.is_set():
                log.exception("the run in %s stopped", self.run_dir)
            self.failure = exc
        finally:
            if self.agent.holds_scoring and self.agent.scoring is not None:
                self.agent.holds_scoring = False
                self.agent.scoring.release()
            with self._lock:
                self._ended = True
                self._returned.set()
            summary, change = self.summary, self.last_answer
            self.agent.release_held(None if summary is None or change is None else lambda v: change(v, summary))
            self._drain()

    def _drain(self) -> None:
        """Refuse the jobs left in the queue: the runner has returned."""
        while True:
            try:
                job = self.agent.inbox.get_nowait()
            except queue.Empty:
                return
            if job is not None:
                job.answer.set_exception(RunEnded(self.ended_message()))

    def close(self) -> None:
        """Stop the runner at its next job (an unfinished day's calls are dropped on resume) and wait for it."""
        with self._lock:
            if not self._ended:
                self._ended = True
                self.agent.inbox.put(_STOP)
        if self._thread is not None:
            self._thread.join()

    @property
    def returned(self) -> bool:
        """True once the runner has returned (the run folder complete, or the runner stopped)."""
        return self._returned.is_set()

    def ended_message(self) -> str:
        """Why no job is taken any more."""
        if self.summary is not None:
            days = self.summary.days
            return f"the episode is over ({days} days settled); the run folder {self.run_dir} holds its metrics"
        if self.failure is not None:
            return f"the episode stopped on an error: {describe(self.failure)}"
        return "the episode was stopped"

    # ------------------------------------------------------------------ jobs

    def submit(self, run: Callable[[ToolSession], Any]) -> Any:
        """Run `run(session)` on the runner's thread after the jobs before it and return its value.

        A job that settles the day is answered once the day is kept (module docstring); `RunEnded` once no job
        is taken.
        """
        job = Job(run)
        with self._lock:
            if self._ended:
                raise RunEnded(self.ended_message())
            self.agent.inbox.put(job)
        return job.answer.result()


def describe(exc: BaseException) -> str:
    """An error as a player reads it: an AutoVendError's message, else its type and message."""
    return str(exc) if isinstance(exc, AutoVendError) else f"{type(exc).__name__}: {exc}"

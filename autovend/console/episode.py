"""A person's episode into a run folder: `PlayEpisode` runs the runner's `run_episode` with a `HumanAgent`.

    episode = PlayEpisode(world, seed=1, out_dir="runs/me-s1", days=30, world_path="worlds/cn20").start()
    episode.call("get_warehouse", {})          # ToolResult, exactly as an in-process agent gets it
    episode.call("end_day", {})                # returns once the day is settled and checkpointed
    episode.state()                            # PlayState: day, the daily report, notebook, metrics at the end
    episode.close()                            # stop; starting again on the same folder resumes

The episode is an ordinary `autovend.runner.run_episode` on a thread of its own, whose agent (`HumanAgent`,
named "human") takes its tool calls from a queue instead of deciding them: the calls are carried out on the
runner's thread, in order, so the run folder is exactly what `autovend run` writes for any agent (run.json,
trajectory.jsonl, records, daily.csv, and at the end metrics.json, report.md, report.html and figures, scored
by the same evaluation). The runner checkpoints after every settled day (`sync`: a process with threads must
not fork); starting a `PlayEpisode` on a folder holding a checkpoint resumes from it, and the calls of a day
that was under way are dropped, as for any resumed agent.
"""

from __future__ import annotations

import csv
import json
import queue
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from autovend.errors import AutoVendError, OutputExistsError
from autovend.runner import CHECKPOINT_DIR, CHECKPOINT_FILE, RunSummary, is_finished, run_episode
from autovend.session import ToolSession
from autovend.tools.result import ToolResult
from autovend.world.model import World

HUMAN_AGENT = "human"
POLL_S = 0.05  # how often a waiting caller looks at the runner (it sleeps in between)


class EpisodeOver(AutoVendError):
    """A call after the episode has finished (or after the runner stopped on an error)."""


class _Stop(Exception):
    """Raised inside the runner's thread to stop the episode (`PlayEpisode.close`)."""


@dataclass(frozen=True)
class Snapshot:
    """What the player sees of the episode at one moment (read on the runner's thread)."""

    day: int  # the day being played (the last day once the episode is over)
    done: bool  # the world's horizon is settled
    report: dict[str, Any]  # the daily observation (Appendix A.2 structure)
    notebook: str
    counters: dict[str, Any]  # tool calls so far: seq, errors, by_tool
    prompt: str = ""  # the day's user prompt, as an agent gets it

    @classmethod
    def of(cls, session: ToolSession) -> Snapshot:
        """The session's current state."""
        return cls(
            session.day, session.done, session.observation(), session.notebook, session.counters, session.daily_prompt()
        )


@dataclass(frozen=True)
class PlayState:
    """The state `GET /api/state` returns: the snapshot plus the run's progress and, at the end, its metrics.

    Once finished, `day` is the last day played and the report's balance is the one at its close (metrics.json's
    net assets), not the next morning's after that day's fees.
    """

    day: int
    days: int  # days this episode settles
    settled: int  # days settled so far
    finished: bool  # the run folder is complete (metrics.json and the reports written)
    run_dir: Path
    snapshot: Snapshot
    metrics: dict[str, Any] | None = None
    error: str | None = None  # why the runner stopped, if it failed

    def to_json(self) -> dict[str, Any]:
        """The state as a JSON object (the API's `GET /api/state`)."""
        return {
            "day": self.day,
            "days": self.days,
            "settled": self.settled,
            "finished": self.finished,
            "run_dir": str(self.run_dir),
            "notebook": self.snapshot.notebook,
            "tool_calls": self.snapshot.counters,
            "report": self.snapshot.report,
            "prompt": self.snapshot.prompt,
            "metrics": self.metrics,
            "error": self.error,
        }


def closing_balance(run_dir: Path) -> dict[str, float]:
    """The balance block (as the daily report has it) at the close of the last day in the folder's daily.csv."""
    with (run_dir / "daily.csv").open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        return {}
    last = rows[-1]
    names = {"cash": "cash", "shelf": "shelf_value", "warehouse": "warehouse_value", "in_transit": "in_transit_value"}
    out = {key: float(last[col]) for key, col in names.items()}
    out.update(inventory_at_cost=float(last["inventory_at_cost"]), net_assets=float(last["net_assets"]))
    return out


@dataclass
class _Request:
    """One job for the runner's thread: a function of the session, and where its answer goes."""

    run: Callable[[ToolSession], Any]
    ends_day: bool = False
    answer: Future[Any] = field(default_factory=Future)


class HumanAgent:
    """An agent whose calls come from `submit` (another thread) instead of a policy; see the module docstring."""

    name = HUMAN_AGENT

    def __init__(self) -> None:
        self.inbox: queue.Queue[_Request | None] = queue.Queue()
        self.waiting = threading.Event()  # set while act_day waits for the next request
        self.last: Snapshot | None = None  # the state after the last settled day

    def start(self, session: ToolSession) -> None:
        """Nothing to prepare: the person reads the report in the page."""

    def act_day(self, session: ToolSession) -> None:
        """Carry out the requests in order until one of them ends the day (a `None` request stops the run)."""
        while True:
            self.waiting.set()
            request = self.inbox.get()
            self.waiting.clear()
            if request is None:
                raise _Stop
            try:
                value = request.run(session)
            except BaseException as exc:  # noqa: BLE001 - the caller gets the error, the day goes on
                request.answer.set_exception(exc)
                continue
            if request.ends_day and isinstance(value, ToolResult) and value.ok:
                self.last = Snapshot.of(session)
                request.answer.set_result(value)
                return
            request.answer.set_result(value)

    def state_dict(self) -> dict[str, Any]:
        """A person keeps their state in their head (and the notebook): nothing to save."""
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        """Nothing to restore."""


class PlayEpisode:
    """One played episode into `out_dir` (see the module docstring); `start()` before use, `close()` after."""

    def __init__(
        self,
        world: World,
        seed: int,
        out_dir: str | Path,
        days: int | None = None,
        *,
        world_path: str | Path | None = None,
        force: bool = False,
    ) -> None:
        self.world = world
        self.seed = int(seed)
        self.run_dir = Path(out_dir)
        self.days = world.horizon_days if days is None else int(days)
        if not 1 <= self.days <= world.horizon_days:
            raise AutoVendError(f"--days must be between 1 and the world's horizon {world.horizon_days}, got {days}")
        self.world_path = world_path
        self.force = force
        self.agent = HumanAgent()
        self.summary: RunSummary | None = None
        self.error: str | None = None
        self.resumed = False
        self._finished = threading.Event()
        self._gate = threading.Lock()  # orders submit() against the end of the runner
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ life cycle

    def start(self) -> PlayEpisode:
        """Start the runner (fresh, or resumed from the folder's checkpoint); return once day one can be played.

        Raises `OutputExistsError` for a folder holding a finished run (unless `force`), and the runner's
        error (e.g. a checkpoint of another world or seed) when it cannot start.
        """
        if not self.force and is_finished(self.run_dir):
            raise OutputExistsError(
                f"{self.run_dir} holds a finished run; look at it with `autovend console --run {self.run_dir}`, "
                "choose another --out, or pass --force to play it again"
            )
        self.resumed = not self.force and (self.run_dir / CHECKPOINT_DIR / CHECKPOINT_FILE).exists()
        self._thread = threading.Thread(target=self._run, name=f"autovend-play-{self.run_dir.name}", daemon=True)
        self._thread.start()
        self._wait_ready()
        if self.error is not None and self.summary is None:
            raise AutoVendError(self.error)
        return self

    def _run(self) -> None:
        try:
            self.summary = run_episode(
                self.world,
                self.agent,
                self.seed,
                days=self.days,
                out_dir=self.run_dir,
                resume=not self.force,
                force=self.force,
                world_path=self.world_path,
                checkpoint="sync",
            )
        except _Stop:
            pass
        except Exception as exc:  # noqa: BLE001 - reported to the player and by start()
            self.error = str(exc) if isinstance(exc, AutoVendError) else f"{type(exc).__name__}: {exc}"
        finally:
            with self._gate:
                self._finished.set()
            self._drain()

    def _drain(self) -> None:
        """Answer the requests left in the queue: the episode is over."""
        while True:
            try:
                request = self.agent.inbox.get_nowait()
            except queue.Empty:
                return
            if request is not None:
                request.answer.set_exception(EpisodeOver(self._over_message()))

    def _wait_ready(self) -> None:
        """Wait until the runner waits for the next call, or has finished."""
        while not self._finished.is_set() and not self.agent.waiting.wait(POLL_S):
            pass

    def close(self) -> None:
        """Stop the runner (an unfinished day's calls are dropped on resume) and wait for it."""
        if self._thread is None:
            return
        with self._gate:
            if not self._finished.is_set():
                self.agent.inbox.put(None)
        self._thread.join()

    @property
    def finished(self) -> bool:
        """True once the runner is done (the run folder complete, or the runner failed)."""
        return self._finished.is_set()

    def _over_message(self) -> str:
        if self.error is not None:
            return f"the episode stopped on an error: {self.error}"
        return f"the episode is over ({self.days} days settled); the run folder {self.run_dir} holds its metrics"

    # ------------------------------------------------------------------ calls

    def _submit(self, run: Callable[[ToolSession], Any], ends_day: bool = False) -> Any:
        request = _Request(run, ends_day)
        with self._gate:
            if self._finished.is_set():
                raise EpisodeOver(self._over_message())
            self.agent.inbox.put(request)
        return request.answer.result()

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Run one of the 18 tools on the current day; `end_day` returns once the day is settled and saved.

        After the last day `end_day` returns once the run folder is complete (metrics.json and the reports).
        Raises `EpisodeOver` once the episode has finished.
        """
        ends_day = tool == "end_day"
        result: ToolResult = self._submit(lambda s: s.call(tool, arguments), ends_day)
        if ends_day and result.ok:
            self._wait_ready()  # the runner checkpoints (or, after the last day, evaluates) before the next call
        return result

    def state(self) -> PlayState:
        """The current state (after the episode: the closing state and the metrics)."""
        snapshot: Snapshot | None = None
        if not self._finished.is_set():
            try:
                snapshot = self._submit(Snapshot.of)
            except EpisodeOver:
                snapshot = None
        if snapshot is None:
            return self._final_state()
        return PlayState(snapshot.day, self.days, snapshot.day - 1, False, self.run_dir, snapshot)

    def _final_state(self) -> PlayState:
        snapshot = self.agent.last
        if snapshot is None:  # stopped or failed before the first day was settled
            snapshot = Snapshot(1, False, {}, "", {})
        metrics = None
        path = self.run_dir / "metrics.json"
        if self.summary is not None and path.exists():
            metrics = json.loads(path.read_text(encoding="utf-8"))
        finished = self.summary is not None
        if finished:  # the last report is the next day's, after its fees: show the balance at the close instead
            snapshot = replace(snapshot, report={**snapshot.report, "balance": closing_balance(self.run_dir)})
        settled = self.summary.days if self.summary is not None else snapshot.day - (0 if snapshot.done else 1)
        day = settled if finished else snapshot.day  # a finished run shows its last day
        return PlayState(day, self.days, settled, finished, self.run_dir, snapshot, metrics, self.error)

"""A person's episode into a run folder: `PlayEpisode` runs the runner's `run_episode` with a `HumanAgent`.

    episode = PlayEpisode(world, seed=1, out_dir="runs/me-s1", days=30, world_path="worlds/cn20").start()
    episode.call("get_warehouse", {})          # ToolResult, exactly as an in-process agent gets it
    episode.call("end_day", {})                # returns once the day is settled and checkpointed
    episode.state()                            # PlayState: day, the daily report, notebook, metrics at the end
    episode.close()                            # stop; starting again on the same folder resumes

The episode is an ordinary `autovend.runner.run_episode` on a thread of its own, driven by the outside-player
driver (`autovend.outside.OutsidePlay`): its agent (`HumanAgent`, named "human") takes its tool calls from a
queue instead of deciding them, and carries them out on the runner's thread, in order, so the run folder is
exactly what `autovend run` writes for any agent (run.json, trajectory.jsonl, records, daily.csv, and at the end
metrics.json, report.md, report.html and figures, scored by the same evaluation). The runner checkpoints after
every settled day (`sync`: a process with threads must not fork); starting a `PlayEpisode` on a folder holding a
checkpoint resumes from it, and the calls of a day that was under way are dropped, as for any resumed agent.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from autovend.agents.harness import settled_days
from autovend.errors import AutoVendError, OutputExistsError
from autovend.outside import OutsideAgent, OutsidePlay, RunEnded, describe
from autovend.runner import CHECKPOINT_DIR, CHECKPOINT_FILE, RunSummary, is_finished
from autovend.session import ToolSession
from autovend.tools.result import ToolResult
from autovend.world.model import World

HUMAN_AGENT = "human"


class EpisodeOver(AutoVendError):
    """A call after the episode has finished (or after the runner stopped on an error)."""


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
    scoring: bool = False  # the last day is settled: the run is being scored and its reports written

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
            "scoring": self.scoring,
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


class HumanAgent(OutsideAgent):
    """The outside player's agent named "human", keeping the state after each settled day for the page."""

    def __init__(self) -> None:
        super().__init__(HUMAN_AGENT)
        self.last: Snapshot | None = None  # the state after the last settled day
        self.settled = 0  # days settled so far
        self.last_settled = False  # the episode's last day is settled: the runner scores the run next

    def day_settled(self, session: ToolSession) -> None:
        """Keep the state the day ended in (shown once the run is finished) and whether it was the last."""
        self.last = Snapshot.of(session)
        self.settled = settled_days(session)  # the harness's count: agent code may not reach the episode
        self.last_settled = session.done or self.settled >= self.last_day


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
        self.resumed = False
        self.play = OutsidePlay(
            world,
            self.agent,
            self.seed,
            self.run_dir,
            days=self.days,
            world_path=world_path,
            resume=not force,
            force=force,
        )

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
        try:
            self.play.start()
        except Exception as exc:
            raise AutoVendError(describe(exc)) from exc
        return self

    def close(self) -> None:
        """Stop the runner (an unfinished day's calls are dropped on resume) and wait for it."""
        self.play.close()

    @property
    def summary(self) -> RunSummary | None:
        """The runner's summary once the run is finished."""
        return self.play.summary

    @property
    def error(self) -> str | None:
        """Why the runner stopped, if it failed."""
        return None if self.play.failure is None else describe(self.play.failure)

    @property
    def scoring(self) -> bool:
        """True from the settling of the last day until the run folder is complete (metrics and reports)."""
        return self.agent.last_settled and not self.play.returned

    @property
    def finished(self) -> bool:
        """True once the runner is done (the run folder complete, or the runner failed)."""
        return self.play.returned

    def _over_message(self) -> str:
        if self.error is not None:
            return f"the episode stopped on an error: {self.error}"
        return f"the episode is over ({self.days} days settled); the run folder {self.run_dir} holds its metrics"

    # ------------------------------------------------------------------ calls

    def _submit(self, run: Callable[[ToolSession], Any]) -> Any:
        try:
            return self.play.submit(run)
        except RunEnded:
            raise EpisodeOver(self._over_message()) from None

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Run one of the 18 tools on the current day; `end_day` returns once the day is settled and saved.

        After the last day `end_day` returns once the run folder is complete (metrics.json and the reports).
        Raises `EpisodeOver` once the episode has finished.
        """
        result: ToolResult = self._submit(lambda s: s.call(tool, arguments))
        return result

    def state(self) -> PlayState:
        """The current state (after the episode: the closing state and the metrics)."""
        snapshot: Snapshot | None = None
        if self.scoring and self.agent.last is not None:  # the runner is busy scoring: do not queue behind it
            last = self.agent.last
            return PlayState(self.agent.settled, self.days, self.agent.settled, False, self.run_dir, last, scoring=True)
        if not self.play.returned:
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

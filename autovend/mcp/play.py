"""The episodes an MCP server hosts: `SessionPlay` (unscored) and `ScoredPlay` (a run folder, scored by the runner).

    play = ScoredPlay(world, seed=1, out_dir="runs/mcp-s1", days=30, transport="stdio")
    result = play.call("get_warehouse", {}, client="claude-ai")   # blocking, from any thread
    day, prompt = play.daily()
    play.close()                                                  # the run stays resumable

A `ScoredPlay` runs `autovend.runner.run_episode` in a thread of its own, with `RemoteAgent` as the
agent: its `act_day` executes the calls that arrive from MCP clients, one at a time, and returns when
one of them settles the day. Everything else is the runner's: the run folder (run.json, trajectory,
records, daily ledger), a checkpoint after every day, and at the last day the evaluation (metrics.json,
report.md, report.html, figures), so an agent behind MCP is scored exactly as one run in process.

- The answer to an `end_day` is sent once the runner has written that day's checkpoint (and, after
  the last day, the metrics), so a client that has it knows the day is kept.
- A play starts with `run_episode(resume=True)`: a folder with a checkpoint goes on from its last
  settled day (calls of a day under way at the stop are undone, as `autovend run --resume` does);
  an empty folder starts at day 1; a finished run is refused with `OutputExistsError` (`force`
  starts it again).
- `close` stops the runner's thread; the checkpoint stays for the next server.

A `SessionPlay` is one `ToolSession` without a run folder (an optional trajectory only). Both are
safe to call from several threads: calls of one episode run one at a time (its queue, or the
session's lock), calls of different episodes in parallel.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from autovend.errors import AutoVendError, OutputExistsError
from autovend.outside import OutsideAgent, OutsidePlay, RunEnded
from autovend.runner import (
    CHECKPOINT_DIR,
    CHECKPOINT_FILE,
    RunSummary,
    clear_run_folder,
    is_finished,
    read_checkpoint,
    run_episode,
)
from autovend.session import ToolSession
from autovend.tools.result import ToolResult
from autovend.tools.trajectory import dumps
from autovend.world.model import World

AGENT_NAME = "mcp"  # the agent name of every run played over MCP (run.json, compare)


class Play(Protocol):
    """One episode served to MCP clients."""

    def call(self, tool: str, arguments: dict[str, Any] | None, client: str | None = None) -> ToolResult:
        """Run a tool (blocking; from any thread)."""
        ...

    def call_now(self, tool: str, arguments: dict[str, Any] | None, client: str | None = None) -> ToolResult | None:
        """`call` if it is answered at once without blocking (a kept read-only answer), else None (nothing done)."""
        ...

    def daily(self) -> tuple[int, str]:
        """The current day and its daily prompt (after the episode: the closing message)."""
        ...

    def close(self) -> None:
        """Release the episode (a scored run stays resumable)."""
        ...


def refusal(message: str, code: str = "run_unavailable") -> ToolResult:
    """An error result carrying `message` and a refusal `code` (as the session's own refusals look)."""
    return ToolResult(False, {"error": message}, message, dumps({"error": message}), code=code)


# ------------------------------------------------------------------------------------------------ unscored


class SessionPlay:
    """An unscored episode: one `ToolSession` (calls serialised by its episode lock)."""

    def __init__(self, session: ToolSession) -> None:
        self.session = session

    def call(self, tool: str, arguments: dict[str, Any] | None, client: str | None = None) -> ToolResult:
        """Run a tool on the session."""
        return self.session.call(tool, arguments)

    def call_now(self, tool: str, arguments: dict[str, Any] | None, client: str | None = None) -> ToolResult | None:
        """The session's kept answer to this call (`ToolSession.call_if_kept`), or None."""
        return self.session.call_if_kept(tool, arguments)

    def daily(self) -> tuple[int, str]:
        """The session's day and daily prompt."""
        return self.session.day, self.session.daily_prompt()

    def close(self) -> None:
        """Close the session (trajectory file, SQL worker)."""
        self.session.close()


# ------------------------------------------------------------------------------------------------ scored


class MCPClients(BaseModel):
    """What run.json records as the agent's config for a run played over MCP."""

    transport: str
    clients: list[str]  # the MCP clients (name/version from their initialize) that made calls, in order


# one run is scored at a time in a process: the evaluation draws its figures with matplotlib's pyplot,
# whose state is global (held from the last end_day of a run until its runner returns, in its thread)
SCORING = threading.Lock()


class RemoteAgent(OutsideAgent):
    """The agent `run_episode` drives for a `ScoredPlay`: each day it executes the calls MCP clients send.

    The outside-player driver (`autovend.outside`) carries the calls out on the runner's session until one
    settles the day; that `end_day`'s answer is held back until the runner has checkpointed the day. A call
    that raises stops the run (the session never raises for bad input: anything else is a bug).
    """

    stop_on_error = True

    def __init__(self, transport: str) -> None:
        super().__init__(AGENT_NAME)
        self._transport = transport
        self._clients: list[str] = []

    @property
    def config(self) -> MCPClients:
        """The transport and the clients that played (written to run.json)."""
        return MCPClients(transport=self._transport, clients=list(self._clients))

    def state_dict(self) -> dict[str, Any]:
        """The transport and the clients seen so far."""
        return {"transport": self._transport, "clients": list(self._clients)}

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue with the transport and the clients of the run before the checkpoint."""
        self._transport = str(state.get("transport", self._transport))
        self._clients = list(state.get("clients", []))

    def call(self, session: ToolSession, tool: str, arguments: dict[str, Any] | None, client: str | None) -> ToolResult:
        """Run a tool for `client` (on the runner's thread), noting the client."""
        if client and client not in self._clients:
            self._clients.append(client)
        return session.call(tool, arguments)


class ScoredPlay:
    """An episode played over MCP into a run folder and scored by the runner (see the module docstring).

    world_path: the bundle folder, recorded in run.json (None: the world is saved in the folder).
    days: days to play (default: the world's horizon). force: start again over a previous run.
    Raises `OutputExistsError` for a folder holding a finished run (without `force`),
    `CheckpointError` for a checkpoint of another world or seed.
    """

    def __init__(
        self,
        world: World,
        seed: int,
        out_dir: str | Path,
        *,
        days: int | None = None,
        world_path: str | Path | None = None,
        transport: str = "stdio",
        force: bool = False,
    ) -> None:
        self.out_dir = Path(out_dir)
        self._agent = RemoteAgent(transport)
        if force:
            clear_run_folder(self.out_dir)
        if is_finished(self.out_dir):  # the runner refuses it too; here the message names the server's flags
            raise OutputExistsError(
                f"{self.out_dir} holds a finished run (its scores are in {self.out_dir / 'metrics.json'}); "
                "serve with another --out, or pass --force to play it again"
            )
        self._play = OutsidePlay(
            world,
            self._agent,
            seed,
            self.out_dir,
            days=days,
            world_path=world_path,
            resume=True,
            scoring=SCORING,
            last_answer=self._last_end_day,
        )
        self._play.start()

    def closing_message(self) -> str:
        """What every call gets once the run has ended (scored) or stopped (by an error)."""
        if self._play.summary is not None:
            s = self._play.summary
            return (
                f"The episode is over: {s.days} days were played and settled (final net assets "
                f"{s.final_net_assets:,.2f}). The run is scored: {self.out_dir / 'metrics.json'}, "
                f"{self.out_dir / 'report.md'}. No tool can be used any more."
            )
        if self._play.failure is not None:
            failure = self._play.failure
            message = str(failure) if isinstance(failure, AutoVendError) else repr(failure)
            return f"The run in {self.out_dir} stopped: {message}. Restart the server to continue from its last day."
        return "The server is shutting down; restart it to continue from the last settled day."

    def _last_end_day(self, result: ToolResult, summary: RunSummary) -> ToolResult:
        """The answer to the end_day that ended the scored run: `done`, the final balance and where the run is.

        The session's answer says `done` only after the world's last day; a run of fewer `days` ends
        earlier, and its client is told so here (the run folder keeps the session's answer, as a run
        in process has it).
        """
        if not result.ok:
            return result
        content = {
            "settled": result.content["settled"],
            "done": True,
            "final": {"net_assets": summary.final_net_assets, "cash": summary.final_cash},
            "message": self.closing_message(),
        }
        return ToolResult(True, content, None, dumps(content), result.model)

    def _closed_refusal(self) -> ToolResult:
        """The refusal of a call once the run has ended: `episode_over` when scored, else `run_unavailable`."""
        return refusal(self.closing_message(), "episode_over" if self._play.summary is not None else "run_unavailable")

    @property
    def finished(self) -> bool:
        """True once the runner has written the run's metrics and report."""
        return self._play.summary is not None

    @property
    def summary(self) -> RunSummary | None:
        """The runner's summary once the run is finished."""
        return self._play.summary

    def call(self, tool: str, arguments: dict[str, Any] | None, client: str | None = None) -> ToolResult:
        """Run a tool in the episode (waits for the calls before it); refused once the run has ended."""
        agent = self._agent
        try:
            result: ToolResult = self._play.submit(lambda s: agent.call(s, tool, arguments, client))
        except RunEnded:
            return self._closed_refusal()
        return result

    def call_now(self, tool: str, arguments: dict[str, Any] | None, client: str | None = None) -> ToolResult | None:
        """None: every call of a scored run goes through its runner's queue (`call`)."""
        return None

    def daily(self) -> tuple[int, str]:
        """The current day and its daily prompt."""
        try:
            answer: tuple[int, str] = self._play.submit(lambda s: (s.day, s.daily_prompt()))
        except RunEnded:
            summary = self._play.summary
            return (summary.days if summary is not None else 0, self.closing_message())
        return answer

    def close(self) -> None:
        """Stop the runner's thread (an unfinished run keeps its last checkpoint) and wait for it."""
        self._play.close()


# ------------------------------------------------------------------------------------------------ scoring early


def unfinished_runs(out: Path) -> list[Path]:
    """The run folders with a checkpoint in `out`: `out` itself (stdio), else its subfolders (HTTP), sorted."""
    if (out / CHECKPOINT_DIR / CHECKPOINT_FILE).is_file():
        return [out]
    if not out.is_dir():
        return []
    return sorted(p for p in out.iterdir() if (p / CHECKPOINT_DIR / CHECKPOINT_FILE).is_file())


def score_now(world: World, seed: int, run_dir: Path, world_path: str | Path | None = None) -> RunSummary:
    """Score a run played over MCP as it stands: its days up to the last checkpoint, by the runner's evaluation.

    The runner resumes the run with the days it has settled as its length, so nothing is played and
    it goes straight to the run folder's metrics, report and figures (run.json: `days_requested`).
    """
    day = int(read_checkpoint(run_dir / CHECKPOINT_DIR / CHECKPOINT_FILE)["day"])
    agent = RemoteAgent(transport="unknown")  # load_state restores the run's
    with SCORING:
        return run_episode(
            world, agent, seed, days=day, out_dir=run_dir, resume=True, world_path=world_path, checkpoint="sync"
        )

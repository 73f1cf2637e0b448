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

import logging
import queue
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel

from autovend.env.boundary import episode_of
from autovend.errors import AutoVendError, OutputExistsError
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

log = logging.getLogger(__name__)

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


class PlayStopped(Exception):
    """Raised in the runner's thread to end a play that is closed before its last day."""


class MCPClients(BaseModel):
    """What run.json records as the agent's config for a run played over MCP."""

    transport: str
    clients: list[str]  # the MCP clients (name/version from their initialize) that made calls, in order


@dataclass
class _Request:
    op: str  # "call" or "daily"
    tool: str
    arguments: dict[str, Any] | None
    client: str | None
    answer: Future[Any]


_STOP = object()
# one run is scored at a time in a process: the evaluation draws its figures with matplotlib's pyplot,
# whose state is global (held from the last end_day of a run until its runner returns, in its thread)
SCORING = threading.Lock()


class RemoteAgent:
    """The agent `run_episode` drives for a `ScoredPlay`: each day it executes the calls MCP clients send.

    `act_day` answers requests from the play's queue on the runner's session until a call settles the
    day; that `end_day`'s answer is held back and sent at the start of the next `act_day` (or by the
    play once the runner returns), i.e. after the runner has checkpointed the day.
    """

    name = AGENT_NAME

    def __init__(self, requests: queue.Queue[Any], transport: str, last_day: int = 0) -> None:
        self._requests = requests
        self._transport = transport
        self.last_day = last_day  # the runner's last day (it scores the run after it)
        self.scoring = False  # True once this thread holds SCORING
        self._clients: list[str] = []
        self.held: tuple[Future[Any], ToolResult] | None = None  # the last end_day and its answer
        self.ready = threading.Event()  # set when the first act_day is reached (the episode is open)

    @property
    def config(self) -> MCPClients:
        """The transport and the clients that played (written to run.json)."""
        return MCPClients(transport=self._transport, clients=list(self._clients))

    def start(self, session: ToolSession) -> None:
        """Nothing to prepare: the clients act."""

    def state_dict(self) -> dict[str, Any]:
        """The transport and the clients seen so far."""
        return {"transport": self._transport, "clients": list(self._clients)}

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue with the transport and the clients of the run before the checkpoint."""
        self._transport = str(state.get("transport", self._transport))
        self._clients = list(state.get("clients", []))

    def release_held(self) -> None:
        """Send the held end_day answer, if any."""
        if self.held is not None:
            answer, result = self.held
            self.held = None
            answer.set_result(result)

    def act_day(self, session: ToolSession) -> None:
        """Execute the clients' calls until one settles the day (raises `PlayStopped` when the play closes)."""
        self.release_held()
        self.ready.set()
        while True:
            request = self._requests.get()
            if request is _STOP:
                raise PlayStopped
            assert isinstance(request, _Request)
            if request.op == "daily":
                request.answer.set_result((session.day, session.daily_prompt()))
                continue
            if request.client and request.client not in self._clients:
                self._clients.append(request.client)
            settled = episode_of(session).settled_days
            try:
                result = session.call(request.tool, request.arguments)
            except BaseException as exc:  # the session never raises for bad input; anything else is a bug
                request.answer.set_exception(exc)
                raise
            episode = episode_of(session)
            if episode.settled_days != settled:
                self.held = (request.answer, result)
                if episode.settled_days >= self.last_day or episode.sim.done:  # the runner scores the run next
                    SCORING.acquire()
                    self.scoring = True
                return
            request.answer.set_result(result)


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
        self._requests: queue.Queue[Any] = queue.Queue()
        self._agent = RemoteAgent(self._requests, transport, world.horizon_days if days is None else int(days))
        self._summary: RunSummary | None = None
        self._failure: BaseException | None = None
        self._closed = False
        self._lock = threading.Lock()  # closing and asking do not cross
        self._stopped = threading.Event()
        if force:
            clear_run_folder(self.out_dir)
        if is_finished(self.out_dir):  # the runner refuses it too; here the message names the server's flags
            raise OutputExistsError(
                f"{self.out_dir} holds a finished run (its scores are in {self.out_dir / 'metrics.json'}); "
                "serve with another --out, or pass --force to play it again"
            )
        args = (world, self._agent, seed)
        kwargs: dict[str, Any] = {
            "days": days,
            "out_dir": self.out_dir,
            "resume": True,
            "world_path": world_path,
            "checkpoint": "sync",  # threads and fork do not mix; a day's checkpoint is written before its answer
        }
        self._thread = threading.Thread(target=self._run, args=(args, kwargs), name=f"play {self.out_dir}", daemon=True)
        self._thread.start()
        while not (self._agent.ready.wait(0.05) or self._stopped.is_set()):
            pass
        if self._failure is not None:  # the run could not open: end the thread, tell the caller
            self._closed = True
            self._requests.put(_STOP)
            self._thread.join()
            raise self._failure

    def _run(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        try:
            self._summary = run_episode(*args, **kwargs)
        except PlayStopped:
            pass
        except BaseException as exc:  # noqa: BLE001 - reported to the clients and, before serving, to the caller
            if self._agent.ready.is_set():
                log.exception("the run in %s stopped", self.out_dir)
            self._failure = exc
        finally:
            if self._agent.scoring:
                self._agent.scoring = False
                SCORING.release()
            self._stopped.set()
        if self._summary is not None and self._agent.held is not None:
            answer, result = self._agent.held
            self._agent.held = (answer, self._last_end_day(result))
        self._agent.release_held()  # the last end_day: answered once metrics and report are written
        while True:  # after the episode: every request gets the closing message
            request = self._requests.get()
            if request is _STOP:
                return
            if request.op == "daily":
                request.answer.set_result((self._summary.days if self._summary else 0, self.closing_message()))
            else:
                request.answer.set_result(self._closed_refusal())

    def closing_message(self) -> str:
        """What every call gets once the run has ended (scored) or stopped (by an error)."""
        if self._summary is not None:
            s = self._summary
            return (
                f"The episode is over: {s.days} days were played and settled (final net assets "
                f"{s.final_net_assets:,.2f}). The run is scored: {self.out_dir / 'metrics.json'}, "
                f"{self.out_dir / 'report.md'}. No tool can be used any more."
            )
        if self._failure is not None:
            message = str(self._failure) if isinstance(self._failure, AutoVendError) else repr(self._failure)
            return f"The run in {self.out_dir} stopped: {message}. Restart the server to continue from its last day."
        return "The server is shutting down; restart it to continue from the last settled day."

    def _last_end_day(self, result: ToolResult) -> ToolResult:
        """The answer to the end_day that ended the scored run: `done`, the final balance and where the run is.

        The session's answer says `done` only after the world's last day; a run of fewer `days` ends
        earlier, and its client is told so here (the run folder keeps the session's answer, as a run
        in process has it).
        """
        if not result.ok or self._summary is None:
            return result
        s = self._summary
        content = {
            "settled": result.content["settled"],
            "done": True,
            "final": {"net_assets": s.final_net_assets, "cash": s.final_cash},
            "message": self.closing_message(),
        }
        return ToolResult(True, content, None, dumps(content), result.model)

    def _closed_refusal(self) -> ToolResult:
        """The refusal of a call once the run has ended: `episode_over` when scored, else `run_unavailable`."""
        return refusal(self.closing_message(), "episode_over" if self._summary is not None else "run_unavailable")

    @property
    def finished(self) -> bool:
        """True once the runner has written the run's metrics and report."""
        return self._summary is not None

    @property
    def summary(self) -> RunSummary | None:
        """The runner's summary once the run is finished."""
        return self._summary

    def _ask(self, request: _Request) -> Any:
        with self._lock:
            if self._closed:
                return None
            self._requests.put(request)
        return request.answer.result()

    def call(self, tool: str, arguments: dict[str, Any] | None, client: str | None = None) -> ToolResult:
        """Run a tool in the episode (waits for the calls before it); refused once the run has ended."""
        result = self._ask(_Request("call", tool, arguments, client, Future()))
        return self._closed_refusal() if result is None else result

    def call_now(self, tool: str, arguments: dict[str, Any] | None, client: str | None = None) -> ToolResult | None:
        """None: every call of a scored run goes through its runner's queue (`call`)."""
        return None

    def daily(self) -> tuple[int, str]:
        """The current day and its daily prompt."""
        answer = self._ask(_Request("daily", "", None, None, Future()))
        return (0, self.closing_message()) if answer is None else answer

    def close(self) -> None:
        """Stop the runner's thread (an unfinished run keeps its last checkpoint) and wait for it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._requests.put(_STOP)  # one for the runner's act_day (if it is still running) ...
            self._requests.put(_STOP)  # ... one for the loop after it
        self._thread.join()
        self._agent.release_held()
        while not self._requests.empty():  # requests queued behind the stop
            request = self._requests.get_nowait()
            if isinstance(request, _Request):
                message = self.closing_message()
                request.answer.set_result(self._closed_refusal() if request.op == "call" else (0, message))


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
    agent = RemoteAgent(queue.Queue(), transport="unknown")  # load_state restores the run's
    with SCORING:
        return run_episode(
            world, agent, seed, days=day, out_dir=run_dir, resume=True, world_path=world_path, checkpoint="sync"
        )

"""The `--mcp` mode: the model's tool calls go to an `autovend serve` over MCP, mirrored in process.

    bridge = MCPBridge(serve_command("worlds/cn20", seed=1))        # starts `autovend serve` on stdio
    bridge = MCPBridge("http://127.0.0.1:8765/mcp")                  # or an `autovend serve --transport http`
    backend = bridge.bind(session)    # session-like: call, tools, system_prompt, daily_prompt, day, done

What the model reads comes from the MCP server: the tool listing, the server's instructions (the
system prompt), the `daily` prompt and every tool result, as an MCP client such as the paper's
harness would get them. Every call is also applied to the runner's in-process `ToolSession` of the
same world and seed (the mirror), so checkpoints, `--resume`, the run folder and the metrics work as
in process; the simulator is deterministic, so both sides must agree, and the bridge checks it
(same system prompt and day when binding, same ok/error for every call, the same settlement at every
`end_day`) and stops with `MCPBridgeError` if they part. On `--resume` a freshly started server is
still on day 1: the bridge replays the state-changing calls of the run's trajectory (orders, prices,
discards, restocks, reductions, delistings, notebook writes and end_day) to bring it to the
checkpoint's day before the model continues.

The MCP SDK is asynchronous; the bridge runs it on an event loop in a daemon thread and offers plain
blocking calls (`MCPClient`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import shlex
import sys
import threading
from pathlib import Path
from typing import Any

from autovend.errors import MCPBridgeError
from autovend.session import ToolResult, ToolSession
from autovend.tools.registry import MUTATION_TOOLS
from autovend.tools.trajectory import read_trajectory

STATE_CHANGING = frozenset({*MUTATION_TOOLS, "end_day", "write_memory"})
KIND_META = "autovend/kind"


def serve_command(world: str | Path, seed: int, python: str | None = None, scenario: str | None = None) -> str:
    """The command that serves one episode of `world` (changed by `scenario`, if any) with `seed` on stdio."""
    exe = python or sys.executable
    extra = [] if scenario is None else ["--scenario", str(scenario)]
    return shlex.join([exe, "-m", "autovend.cli", "serve", "--world", str(world), "--seed", str(seed), *extra])


def _is_url(target: str) -> bool:
    return target.startswith(("http://", "https://"))


class MCPClient:
    """A blocking MCP client session to one server (stdio command or streamable-HTTP URL).

    The SDK is asynchronous: one task on an event loop in a daemon thread owns the connection
    (its context managers must be entered and left in the same task) and runs the requests this
    object queues; a process that ends without `close` is not held up by it, and a stdio server
    stops when its input closes.
    """

    def __init__(self, target: str, *, timeout_s: float = 120.0, cwd: str | Path | None = None) -> None:
        self.target = target
        self.timeout_s = timeout_s
        self._cwd = cwd
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="autovend-mcp-client", daemon=True)
        self._thread.start()
        self._queue: asyncio.Queue[tuple[Any, tuple[Any, ...], concurrent.futures.Future[Any]] | None] | None = None
        self._ready: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._owner = asyncio.run_coroutine_threadsafe(self._own(), self._loop)
        try:
            init = self._ready.result(timeout_s)
        except Exception as exc:
            self.close()
            if isinstance(exc, MCPBridgeError):
                raise
            raise MCPBridgeError(
                f"cannot connect to the MCP server {target!r} ({_reason(exc)}); start it with "
                "`autovend serve --world W --seed S [--transport http --port P]` and pass its command or URL"
            ) from exc
        self.instructions: str = init.instructions or ""

    def _transport(self) -> Any:
        if _is_url(self.target):
            from mcp.client.streamable_http import streamable_http_client

            return streamable_http_client(self.target)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        argv = shlex.split(self.target)
        if not argv:
            raise MCPBridgeError("the MCP server command is empty; give e.g. 'autovend serve --world W --seed S'")
        cwd = None if self._cwd is None else str(self._cwd)
        return stdio_client(StdioServerParameters(command=argv[0], args=argv[1:], cwd=cwd), errlog=_errlog())

    async def _own(self) -> None:
        """The connection's task: connect, then run queued requests until `None` arrives."""
        from mcp.client import ClientSession

        self._queue = asyncio.Queue()
        try:
            async with (
                self._transport() as (read, write),
                ClientSession(read, write, read_timeout_seconds=self.timeout_s) as session,
            ):
                self._ready.set_result(await session.initialize())
                while (item := await self._queue.get()) is not None:
                    fn, args, fut = item
                    try:
                        fut.set_result(await fn(session, *args))
                    except Exception as exc:  # handed to the caller's thread
                        fut.set_exception(exc)
        except BaseException as exc:  # noqa: BLE001 - reported to whoever waits
            if not self._ready.done():
                self._ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
            if not isinstance(exc, Exception):
                raise

    def _call(self, fn: Any, *args: Any) -> Any:
        if self._queue is None or self._owner.done():
            raise MCPBridgeError(f"the connection to the MCP server {self.target!r} is closed")
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._loop.call_soon_threadsafe(self._queue.put_nowait, (fn, args, fut))
        return fut.result(self.timeout_s + 5.0)

    def list_tools(self) -> list[Any]:
        """The server's tools (the SDK's `Tool` objects)."""

        async def run(session: Any) -> Any:
            return (await session.list_tools()).tools

        return list(self._call(run))

    def call_tool(self, name: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        """Call a tool: (is_error, text of the first content item)."""

        async def run(session: Any) -> Any:
            return await session.call_tool(name, arguments)

        try:
            res = self._call(run)
        except MCPBridgeError:
            raise
        except Exception as exc:
            raise MCPBridgeError(f"the MCP server failed on {name} ({_reason(exc)})") from exc
        content = getattr(res, "content", None) or []
        text = getattr(content[0], "text", "") if content else ""
        return bool(getattr(res, "is_error", False)), text

    def prompt(self, name: str) -> str:
        """The text of the server's prompt `name` (system or daily)."""

        async def run(session: Any) -> Any:
            return await session.get_prompt(name)

        return self._call(run).messages[0].content.text

    def close(self) -> None:
        """Close the session and the transport (a stdio server stops), then the event loop."""
        if self._queue is not None and not self._owner.done():
            self._loop.call_soon_threadsafe(self._queue.put_nowait, None)
        with contextlib.suppress(Exception):
            self._owner.result(10.0)
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10.0)


def _errlog() -> Any:
    """Where a stdio server's stderr goes: the process's real stderr (a replaced sys.stderr may lack a file)."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (AttributeError, OSError, ValueError):
            continue
    return open(os.devnull, "w")  # noqa: SIM115 - lives as long as the server process


def _reason(exc: BaseException) -> str:
    """A one-line reason, unwrapping exception groups to their first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"


def _result(is_error: bool, text: str) -> ToolResult:
    if is_error:
        return ToolResult(False, {"error": text}, text, "")
    try:
        content = json.loads(text)
    except json.JSONDecodeError:
        content = {"text": text}
    return ToolResult(True, content if isinstance(content, dict) else {"result": content}, None, text)


def _day_of(prompt: str) -> int | None:
    head = prompt.split("—", 1)[0].split()
    if len(head) >= 2 and head[0] == "Day" and head[1].isdigit():
        return int(head[1])
    return None


class MirroredSession:
    """A session-like backend: the MCP server answers, the in-process session mirrors (see the module docstring)."""

    def __init__(self, client: MCPClient, local: ToolSession) -> None:
        self.client = client
        self.local = local

    @property
    def day(self) -> int:
        """The current day (the same on both sides)."""
        return self.local.day

    @property
    def done(self) -> bool:
        """True once the last day is settled."""
        return self.local.done

    @property
    def trajectory_path(self) -> Path | None:
        """The run's trajectory (the mirror's)."""
        return self.local.trajectory_path

    def tools(self) -> list[dict[str, Any]]:
        """The server's tool listing as {name, kind, description, input_schema}."""
        return [
            {
                "name": t.name,
                "kind": (t.meta or {}).get(KIND_META, ""),
                "description": t.description or "",
                "input_schema": t.input_schema,
            }
            for t in self.client.list_tools()
        ]

    def system_prompt(self) -> str:
        """The server's instructions (its system prompt)."""
        return self.client.instructions

    def daily_prompt(self) -> str:
        """The server's `daily` prompt."""
        return self.client.prompt("daily")

    def call(self, name: str, arguments: Any = None) -> ToolResult:
        """Run a tool on the server and on the mirror; the server's result is returned."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):  # MCP carries only objects: the mirror gives the refusal
            return self.local.call(name, arguments)
        served = _result(*self.client.call_tool(name, arguments))
        local = self.local.call(name, arguments)
        if served.ok != local.ok:
            day = self.local.day - (name == "end_day" and local.ok)
            theirs = "ok" if served.ok else repr(served.error)
            ours = "ok" if local.ok else repr(local.error)
            raise MCPBridgeError(
                f"the MCP server and the run disagree on {name} on day {day}: server {theirs}, run {ours}; "
                "serve the same world and seed as the run"
            )
        if name == "end_day" and served.ok and served.content.get("settled") != local.content.get("settled"):
            raise MCPBridgeError(
                f"the MCP server settled day {local.content.get('settled', {}).get('day')} differently from the "
                "run (another world or seed?); serve the same world and seed as the run"
            )
        return served

    def sync(self) -> int:
        """Bring a fresh server to the mirror's day (replaying the trajectory); returns the calls replayed."""
        local_day = self.local.day
        served_day = _day_of(self.daily_prompt())
        if served_day == local_day:
            return 0
        if served_day != 1 or local_day < 1:
            raise MCPBridgeError(
                f"the MCP server is on day {served_day} but the run is on day {local_day}; give the bridge a "
                "fresh server (day 1) or one on the run's day"
            )
        path = self.local.trajectory_path
        if path is None or not Path(path).exists():
            raise MCPBridgeError(
                f"the run is on day {local_day} and has no trajectory to replay into the MCP server; resume it "
                "in process (without --mcp)"
            )
        n = 0
        for rec in read_trajectory(path):
            if rec.get("kind") != "call" or rec.get("tool") not in STATE_CHANGING:
                continue
            if not isinstance(rec.get("arguments"), dict):
                continue
            is_error, text = self.client.call_tool(rec["tool"], rec["arguments"])
            n += 1
            if is_error != (not rec.get("ok", True)):
                raise MCPBridgeError(
                    f"replaying the run into the MCP server failed at call {rec.get('seq')} ({rec['tool']} on day "
                    f"{rec.get('day')}): {text[:200]}; serve the same world and seed as the run"
                )
        served_day = _day_of(self.daily_prompt())
        if served_day != local_day:
            raise MCPBridgeError(
                f"after replaying {n} calls the MCP server is on day {served_day}, the run on day {local_day}"
            )
        return n


class MCPBridge:
    """Connects (once, lazily) to the MCP server `target` and binds it to the runner's session."""

    def __init__(self, target: str, *, timeout_s: float = 120.0, cwd: str | Path | None = None) -> None:
        self.target = target
        self.timeout_s = timeout_s
        self.cwd = cwd
        self._client: MCPClient | None = None
        self._bound: MirroredSession | None = None
        self.replayed = 0

    def bind(self, session: ToolSession | MirroredSession) -> MirroredSession:
        """The backend for `session`: connect on first use, check the server against the session, sync it."""
        if isinstance(session, MirroredSession):
            return session
        if self._bound is not None and self._bound.local is session:
            return self._bound
        if not isinstance(session, ToolSession):
            raise MCPBridgeError(f"the MCP bridge mirrors a ToolSession, got {type(session).__name__}")
        if self._client is None:
            self._client = MCPClient(self.target, timeout_s=self.timeout_s, cwd=self.cwd)
        bound = MirroredSession(self._client, session)
        if bound.system_prompt() != session.system_prompt():
            raise MCPBridgeError(
                f"the MCP server {self.target!r} serves another world than the run (its system prompt differs); "
                "serve the run's world bundle"
            )
        self.replayed += bound.sync()
        self._bound = bound
        return bound

    def close(self) -> None:
        """Disconnect (a stdio server stops)."""
        if self._client is not None:
            self._client.close()
            self._client = None
        self._bound = None

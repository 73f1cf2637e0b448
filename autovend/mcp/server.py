"""The MCP server: the 18 tools of AutoVend episodes served with the official `mcp` SDK (low-level server).

    app = build_server("worlds/cn20", seed=1, trajectory_path="runs/s1.jsonl")    # unscored
    app = build_server(world, seed=1, out="runs/mcp-s1", days=30)                  # scored run folders
    anyio.run(app.run_stdio)              # or app.run_http(port=8765, host=..., token=...)

The low-level server serves the registry's JSON schemas as they are (each tool's input schema and
the output schema of its result model), answers a successful call with the result's JSON as text
and as structured content, and returns `CallToolResult(is_error=True)` with the session's message
for every refused call (malformed arguments, unknown tool or id, refused SQL, after the episode), so
the agent reads why and can correct itself; a failing tool never stops the server.

Episodes (`autovend.mcp.play`): with `out`, each is a `ScoredPlay`, a run folder written and
scored by `autovend.runner.run_episode` exactly as `autovend run` does, resumed from its checkpoint
when the server is started again; without, an unscored `ToolSession`. Over stdio the server plays
one episode (in `out` itself); over streamable HTTP each MCP session plays its own
(`autovend.mcp.http`: in `out/NAME` for a client URL ending in `?run=NAME`, else in
`out/SESSION-ID`). Tool calls run in worker threads, one at a time per episode, so a slow query of
one session does not hold up the others; a read-only call whose answer is kept for the current state
(`autovend.tools.views.Views.answer`) is answered on the event loop at once. Over HTTP a bearer
token can be required (`run_http(token=...)`).

The system prompt is the server's `instructions` and, with today's daily prompt, is also offered as
the prompts `system` and `daily`. A line (stdio) or a body (HTTP) that is not a JSON-RPC message is
answered with the same JSON-RPC error on both doors, in words (-32700 parse error; -32600 for JSON that
is no message, a batch or a request whose id is not a string or an integer, id null; -32602 for params
that are no object, or that do not fit the method) and serving goes on (`autovend.mcp.jsonrpc`); every
message is first read by the JSON rules of every door, and a line over 4 MiB is skipped unread
(`autovend.mcp.stdio`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from autovend import __version__
from autovend.env.environment import VendingEnv
from autovend.errors import AutoVendError, BundleError
from autovend.mcp.http import Gate, Plays, loopback_security, owns_its_episode, play_key
from autovend.mcp.jsonrpc import PlainErrors, bad_line_error, id_problem
from autovend.mcp.play import Play, ScoredPlay, SessionPlay, refusal
from autovend.mcp.stdio import ByteSource, GuardedLines, refusal_of
from autovend.session import ToolResult, ToolSession
from autovend.tools.errors import refusal_content
from autovend.tools.prompts import system_prompt
from autovend.tools.schemas import quote
from autovend.webserve import READ_TIMEOUT_S, serve
from autovend.world.model import World

if TYPE_CHECKING:
    from mcp.shared._stream_protocols import ReadStream, WriteStream  # the SDK's stream protocols

SERVER_NAME = "autovend"
HTTP_HOST = "127.0.0.1"  # the default HTTP address: the loopback interface only
HTTP_PATH = "/mcp"


@dataclass(frozen=True)
class ExtraTool:
    """A tool served beside the 18 (e.g. a trivial `ping` for latency benchmarks); not for agents."""

    name: str
    description: str
    handler: Callable[[dict[str, Any]], dict[str, Any]]
    input_schema: dict[str, Any] = field(
        default_factory=lambda: {"type": "object", "properties": {}, "additionalProperties": False}
    )


def load_world(path: str | Path) -> World:
    """Load a frozen world bundle (a folder, or a shipped world's name) with `autovend.world.bundle.load_world`."""
    try:
        from autovend.world.bundle import load_world as load_bundle
        from autovend.world.names import resolve_world
    except ImportError as exc:
        raise BundleError(
            f"cannot load world bundle {path}: the bundle loader (autovend.world.bundle) is not available "
            f"in this installation ({exc}); serve a toy world with --toy instead"
        ) from exc
    folder = resolve_world(path)  # BundleError naming the worlds that can be named
    world = load_bundle(folder)
    if not isinstance(world, World):
        raise BundleError(f"{folder} did not load as a World; re-export the bundle")
    return world


def _is_read_only(name: str) -> bool:
    return name.startswith("get_") or name in ("query_sql", "read_memory")


def _tool_list(listing: list[dict[str, Any]], extra: Sequence[ExtraTool]) -> list[types.Tool]:
    tools = [
        types.Tool(
            name=t["name"],
            description=t["description"],
            input_schema=t["input_schema"],
            output_schema=t["output_schema"],
            annotations=types.ToolAnnotations(
                read_only_hint=_is_read_only(t["name"]),
                destructive_hint=t["name"] in ("discard",),
                idempotent_hint=_is_read_only(t["name"]),
                open_world_hint=False,
            ),
            _meta={"autovend/kind": t["kind"]},
        )
        for t in listing
    ]
    tools += [types.Tool(name=x.name, description=x.description, input_schema=x.input_schema) for x in extra]
    return tools


def to_call_result(result: ToolResult) -> types.CallToolResult:
    """A session result as an MCP result: the JSON as text and as structured content, or the error with `is_error`.

    The text is what an agent reads (the same bytes as in process); the structured content is the
    same JSON object, checked by clients against the tool's output schema. A refused call's text is
    its message and its structured content `{"error": message, "code": code}`
    (`autovend.tools.errors.REFUSAL_SCHEMA`, docs/mcp-clients.md).
    """
    if result.ok:
        return types.CallToolResult(
            content=[types.TextContent(text=result.to_json())], structured_content=result.structured_content()
        )
    message = result.error or "error"
    return types.CallToolResult(
        content=[types.TextContent(text=message)],
        structured_content=refusal_content(message, result.code),
        is_error=True,
    )


class AnswerBadLines:
    """The stdio read stream with every unreadable line answered by an error instead of dropped.

    The SDK's stdio transport puts the exception of a line it cannot parse on the read stream, and
    the server drops it silently; here each such exception is answered on the write stream with
    `bad_line_error` (or, for a line the guarded stdin refused, its answer: a Parse error with the guard's
    reason, or the Invalid Request or Invalid params of `autovend.mcp.jsonrpc.message_problem`, as over
    HTTP; `autovend.mcp.stdio`) and the next message is read, so the client learns of it and serving goes on.
    A request whose id is not a string or an integer reads as a notification (which gets no answer):
    it is answered with an Invalid Request error (`autovend.mcp.jsonrpc.id_problem`).
    """

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        answers: WriteStream[SessionMessage],
        lines: GuardedLines | None = None,
    ) -> None:
        self._inner = inner
        self._answers = answers
        self._lines = lines  # the guarded stdin the lines came from: the reasons of the lines it refused

    @property
    def last_context(self) -> Any:
        """The sender context of the last message (the SDK's context streams keep one)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        """The next message that parsed; unreadable lines before it are answered."""
        while True:
            item = await self._inner.receive()
            if isinstance(item, Exception):
                refused = refusal_of(item, self._lines)
                answer = bad_line_error(item) if refused is None else refused
                await self._answers.send(SessionMessage(answer))
                continue
            message = item.message
            if isinstance(message, types.JSONRPCNotification):
                problem = id_problem({"method": message.method})  # the SDK keeps no id of a notification
                if problem is not None:
                    await self._answers.send(SessionMessage(problem))
                    continue
            return item

    async def aclose(self) -> None:
        """Close the underlying stream."""
        await self._inner.aclose()

    def __aiter__(self) -> AnswerBadLines:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> AnswerBadLines:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


@dataclass(eq=False)
class MCPApp:
    """An MCP server and its episodes: `server` (the SDK's low-level `Server`) and `plays` (by session)."""

    server: Server[Any]
    plays: Plays

    @property
    def session(self) -> ToolSession:
        """The `ToolSession` of the default episode (stdio, in-memory clients) of an unscored server."""
        play = self.plays.get(None)
        if not isinstance(play, SessionPlay):
            raise TypeError("a scored server's episodes are run by the runner; read their run folders")
        return play.session

    def open(self) -> Play:
        """Open the default episode now (a scored one: resume or refuse before serving)."""
        return self.plays.get(None)

    async def run_stdio(self, source: ByteSource | None = None, out: Any = None) -> None:
        """Serve on stdin/stdout until the client closes the connection.

        source, out: in place of stdin's bytes and stdout (an object with async `write(text)` and `flush()`).
        """
        from mcp.server.stdio import stdio_server

        lines = GuardedLines(anyio.wrap_file(sys.stdin.buffer) if source is None else source)
        async with stdio_server(stdin=lines, stdout=out) as (read_stream, write_stream):  # type: ignore[arg-type]
            answering = AnswerBadLines(read_stream, write_stream, lines)
            await self.server.run(answering, write_stream, self.server.create_initialization_options())

    def http_app(self, host: str = HTTP_HOST, token: str | None = None) -> Any:
        """The ASGI app of the streamable-HTTP transport (path /mcp), behind `Gate` (bearer `token`, if any).

        For a loopback `host` the SDK checks Host and Origin headers against loopback names (421, 403).
        """
        app = self.server.streamable_http_app(
            streamable_http_path=HTTP_PATH, host=host, transport_security=loopback_security(host)
        )
        return Gate(app, self.plays, token, host)

    def run_http(
        self,
        port: int,
        host: str = HTTP_HOST,
        token: str | None = None,
        log_level: str = "warning",
        read_timeout_s: float = READ_TIMEOUT_S,
    ) -> None:
        """Serve streamable HTTP on http://{host}:{port}/mcp until interrupted (blocking).

        A request whose headers and body have not arrived in full within `read_timeout_s` seconds gets 408
        and its connection is closed (`autovend.webserve`).
        """
        serve(self.http_app(host, token), host, port, read_timeout_s=read_timeout_s, log_level=log_level)

    def close(self) -> None:
        """Close every episode (trajectory files, SQL workers; scored runs keep their checkpoints)."""
        self.plays.close_all()


def _client_name(ctx: ServerRequestContext[Any]) -> str | None:
    params = ctx.session.client_params
    info = None if params is None else params.client_info
    return None if info is None else f"{info.name} {info.version}".strip()


def build_server(
    world_or_path: World | str | Path,
    seed: int = 0,
    trajectory_path: str | Path | None = None,
    *,
    notebook: str = "",
    sql_time_limit_s: float | None = None,
    extra_tools: Sequence[ExtraTool] = (),
    out: str | Path | None = None,
    days: int | None = None,
    world_path: str | Path | None = None,
    force: bool = False,
    transport: str = "stdio",
) -> MCPApp:
    """An MCP server for episodes on a world (a `World`, or the path of a world bundle) with `seed`.

    Unscored (no `out`): each episode is a `ToolSession` (`trajectory_path`, `notebook` and
    `sql_time_limit_s` apply to the default episode; HTTP sessions get neither trajectory nor notebook).
    Scored (`out`): each episode is a `ScoredPlay` run folder, `out` for the default episode and
    `out/KEY` for an HTTP session's; `days` (default: the horizon), `world_path` (recorded in run.json),
    `force` (start the default episode's run again) and `transport` (recorded) apply.
    """
    if isinstance(world_or_path, World):
        world = world_or_path
    else:
        world = load_world(world_or_path)
        if world_path is None:  # the bundle folder (a shipped world's name resolved), recorded in run.json
            from autovend.world.names import resolve_world

            world_path = resolve_world(world_or_path)
    if out is None and days is not None:
        raise ValueError("days applies to scored episodes: give out too")
    kwargs: dict[str, Any] = {} if sql_time_limit_s is None else {"sql_time_limit_s": sql_time_limit_s}

    def make(key: str | None) -> Play:
        if out is None:
            if key is None:
                return SessionPlay(ToolSession(world, seed, trajectory_path, notebook, **kwargs))
            return SessionPlay(ToolSession(world, seed, **kwargs))
        folder = Path(out) if key is None else Path(out) / key
        return ScoredPlay(
            world,
            seed,
            folder,
            days=days,
            world_path=world_path,
            transport=transport if key is None else "http",
            force=force and key is None,
        )

    plays = Plays(make)
    listing = VendingEnv(world).tools()
    tools = _tool_list(listing, extra_tools)
    extras = {x.name: x for x in extra_tools}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def play_of(ctx: ServerRequestContext[Any]) -> Play:
        key = play_key(ctx.request)
        play = plays.opened(key)  # an open episode at once; opening one (a run folder, a world) in a thread
        if play is not None:
            return play
        return await anyio.to_thread.run_sync(plays.get, key, owns_its_episode(ctx.request))

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        extra = extras.get(params.name)
        if extra is not None:
            content = extra.handler(dict(params.arguments or {}))
            return types.CallToolResult(content=[types.TextContent(text=json.dumps(content))])
        try:
            play = await play_of(ctx)
        except AutoVendError as exc:  # a bad run name, a finished run, a checkpoint of another run
            return to_call_result(refusal(str(exc)))
        args, client = params.arguments, _client_name(ctx)
        now = play.call_now(params.name, args, client)  # a kept read-only answer needs no worker thread
        if now is not None:
            return to_call_result(now)
        return to_call_result(await anyio.to_thread.run_sync(play.call, params.name, args, client))

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(name="system", description="The fixed system prompt of this run."),
                types.Prompt(name="daily", description="Today's prompt: date line, observation, reminder."),
            ]
        )

    async def get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name == "system":
            text, what = system_prompt(world), "The fixed system prompt of this run."
        elif params.name == "daily":
            try:
                play = await play_of(ctx)
            except AutoVendError as exc:
                raise MCPError(types.INVALID_PARAMS, str(exc)) from None
            day, text = await anyio.to_thread.run_sync(play.daily)
            what = f"The prompt of day {day}."
        else:
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt {quote(params.name)}; the prompts are: system, daily")
        return types.GetPromptResult(
            description=what,
            messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))],
        )

    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        title="AutoVend",
        description=f"AutoVend episode on world {world.name!r}, seed {seed}",
        instructions=system_prompt(world),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        get_tool_input_schema=lambda name: next((t.input_schema for t in tools if t.name == name), None),
    )
    server.middleware.append(PlainErrors())  # the SDK's errors about a request's params, in words (both doors)
    return MCPApp(server=server, plays=plays)

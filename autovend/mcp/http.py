"""One episode per MCP session, and the HTTP gate: `Plays` (the server's episodes), run names, the `Gate`.

Over streamable HTTP every MCP session plays an episode of its own, keyed by the client's run name
(the URL's query `?run=NAME`, so a later session, or a client of a restarted server, continues that
run) or else by its session id. Over stdio (and the SDK's in-memory client) there is one episode,
the default one (key None). `Plays.get` opens an episode on its first call. A session that ends with
an HTTP DELETE releases its own unnamed episode, and nothing else: only when the SDK ended a session
it knew by that DELETE (200; an unknown or ended session id gets 404 and releases nothing), and only
the episode that session opened under its own id. A named run is never released by a DELETE (it
stays for the next session, and a run's name is no session id), and an episode whose session ends
otherwise (e.g. by the SDK's idle timeout) stays open until the server stops; `close_all` releases
all at shutdown.

`Gate` wraps the streamable-HTTP app: on a loopback address a request's `Host` must name a loopback
address (else 421) and its `Origin`, if sent, too (else 403), by the rules the console keeps
(`autovend.access`; the SDK's own check, `loopback_security`, stays behind it); with a token, every HTTP
request must carry
`Authorization: Bearer TOKEN` (else 401); a POST body is read by the JSON rules of every door
(`autovend.tools.guard.loads`: no key twice, no NaN, integers within 2^53, 32 levels, Unicode text;
else 400 with a JSON-RPC Parse error) and checked as a JSON-RPC message as a stdio line is
(`autovend.mcp.jsonrpc.message_problem`: 400 with an Invalid Request for a batch, `"jsonrpc": "1.0"`
or a request whose id is not a string or an integer, which the SDK would take for a notification and
never answer; with an Invalid params for params that are no object); after a DELETE that ended a
session it releases that session's own episode. The token check and the token's source
(`autovend.access`) are shared with the web console.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, TransportSecuritySettings
from pydantic import ValidationError

from autovend.access import bearer_authorized, host_allowed, is_loopback, origin_allowed
from autovend.errors import ConfigError
from autovend.mcp.jsonrpc import invalid_message, message_problem, parse_error, wire
from autovend.mcp.play import Play
from autovend.tools.guard import InputError, loads

RUN_QUERY = "run"  # ?run=NAME in the server URL names the run a client plays
SESSION_HEADER = "mcp-session-id"
MAX_BODY_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE  # the SDK's limit of a request body (4 MiB; larger: 413)
BODY = "the request body"  # how an error names what it is about
_RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def play_key(request: Any) -> str | None:
    """The episode a request belongs to: its `?run=` name, else its MCP session id; None without HTTP.

    Raises `ConfigError` for a run name that cannot be a folder name.
    """
    if request is None:
        return None
    name: str | None = request.query_params.get(RUN_QUERY)
    if name is not None:
        if not _RUN_NAME.match(name):
            raise ConfigError(
                f"run name {name[:80]!r} (?{RUN_QUERY}= in the server URL) must be 1-64 letters, digits, '.', '_' "
                "or '-', starting with a letter or digit"
            )
        return name
    session_id: str | None = request.headers.get(SESSION_HEADER)
    return session_id


def owns_its_episode(request: Any) -> bool:
    """True if a request plays the unnamed episode of its own MCP session (no `?run=`, a session id)."""
    return request is not None and RUN_QUERY not in request.query_params and bool(request.headers.get(SESSION_HEADER))


class Plays:
    """The episodes of one server by key (see the module docstring); `make(key)` opens one."""

    def __init__(self, make: Callable[[str | None], Play]) -> None:
        self._make = make
        self._plays: dict[str | None, Play] = {}
        self._opening: dict[str | None, threading.Lock] = {}
        self._sessions: set[str] = set()  # the keys of episodes opened by a session under its own id
        self._lock = threading.Lock()

    def get(self, key: str | None, own_session: bool = False) -> Play:
        """The episode of `key`, opened on first use (blocking: call it off the event loop).

        own_session: `key` is the id of the MCP session asking, which plays its own unnamed episode
        (`owns_its_episode`); only such an episode can be released by `end_session`.
        """
        with self._lock:
            if own_session and key is not None and key not in self._plays:
                self._sessions.add(key)
            play = self._plays.get(key)
            if play is not None:
                return play
            opening = self._opening.setdefault(key, threading.Lock())
        with opening:  # one opening per key; other keys go on meanwhile
            with self._lock:
                play = self._plays.get(key)
            if play is None:
                play = self._make(key)
                with self._lock:
                    self._plays[key] = play
        return play

    def opened(self, key: str | None) -> Play | None:
        """The episode of `key` if it is open."""
        with self._lock:
            return self._plays.get(key)

    def release(self, key: str | None) -> None:
        """Close and forget the episode of `key` (if open)."""
        with self._lock:
            play = self._plays.pop(key, None)
            if key is not None:
                self._sessions.discard(key)
        if play is not None:
            play.close()

    def end_session(self, session_id: str) -> bool:
        """Release the episode the MCP session `session_id` opened under its own id; True if there was one.

        A named run, or an episode of another session, is left alone.
        """
        with self._lock:
            if session_id not in self._sessions:
                return False
        self.release(session_id)
        return True

    def close_all(self) -> None:
        """Close every episode."""
        with self._lock:
            plays = list(self._plays.values())
            self._plays.clear()
        for play in plays:
            play.close()


def loopback_security(host: str) -> TransportSecuritySettings | None:
    """The SDK's Host and Origin checks (421, 403) for an app bound to loopback `host`, None for another host.

    The SDK turns them on by itself only for 127.0.0.1, localhost and ::1; any loopback address gets them here.
    """
    if not is_loopback(host):
        return None
    names = ["127.0.0.1", "localhost", "[::1]"]
    bound = f"[{host.strip('[]')}]" if ":" in host else host
    if bound not in names:
        names.append(bound)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{n}:*" for n in names],
        allowed_origins=[f"http://{n}:*" for n in names],
    )


async def _json_error(send: Any, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [(b"content-type", b"application/json"), *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Any, limit: int) -> tuple[bytes, bool]:
    """The request body, read up to `limit` bytes; (bytes read, whether the whole body was read)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), True
        if size > limit:
            return b"".join(chunks), False


class Gate:
    """ASGI wrapper of the streamable-HTTP app (see the module docstring)."""

    def __init__(self, app: Any, plays: Plays, token: str | None = None, host: str = "127.0.0.1") -> None:
        self.app = app
        self.plays = plays
        self._token = None if token is None else token.encode()
        self._loopback = is_loopback(host)

    def _refused(self, headers: dict[bytes, bytes]) -> tuple[int, str] | None:
        """(status, message) for a request that may not reach a server on loopback (`autovend.access`), else None."""
        if not self._loopback:  # off loopback the bearer token is the gate
            return None
        host = headers.get(b"host", b"").decode("latin-1")
        if not host_allowed(host, loopback=True):
            return 421, (
                "this MCP server answers only requests addressed to this machine (127.0.0.1, localhost, [::1]), "
                f"not to Host {host[:80]!r}: connect to http://127.0.0.1:<port>/mcp"
            )
        origin = headers.get(b"origin")
        if origin is not None and not origin_allowed(origin.decode("latin-1"), host, loopback=True):
            text = origin.decode("latin-1")[:80]
            return 403, f"requests from the page of another site ({text!r}) are refused: this server is this machine's"
        return None

    async def _checked(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        """The receive channel replaying a POST body that passed the checks; None if an error was sent."""
        body, whole = await _read_body(receive, MAX_BODY_BYTES)
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": not whole}
            return dict(await receive())

        if not whole:  # too large or cut off: the SDK answers it (413)
            return replay
        try:
            message = loads(body, "the request body", max_chars=MAX_BODY_BYTES, max_text_chars=MAX_BODY_BYTES)
        except InputError as exc:
            error = parse_error(str(exc))
            await _json_error(send, 413 if exc.too_large else 400, wire(error))
            return None
        problem = message_problem(message, BODY)
        if problem is None:
            try:  # what the SDK would refuse with a pydantic dump (-32602): a last resort, in words
                types.jsonrpc_message_adapter.validate_python(message, by_name=False)
            except ValidationError:
                problem = invalid_message(BODY)
        if problem is not None:
            await _json_error(send, 400, wire(problem))
            return None
        return replay

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Serve one ASGI event (lifespan events pass through)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        refused = self._refused(headers)
        if refused is not None:
            await _json_error(send, refused[0], json.dumps({"error": refused[1]}).encode())
            return
        if not bearer_authorized(headers, self._token):
            body = json.dumps({"error": "unauthorized: send the header Authorization: Bearer <token>"}).encode()
            await _json_error(send, 401, body, [(b"www-authenticate", b'Bearer realm="autovend"')])
            return
        if scope.get("method") == "POST" and headers.get(b"content-type", b"").startswith(b"application/json"):
            receive = await self._checked(scope, receive, send)
            if receive is None:
                return
        session = headers.get(SESSION_HEADER.encode())
        if scope.get("method") != "DELETE" or not session:
            await self.app(scope, receive, send)
            return

        async def ending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                # the SDK ended a session it knew: that session's own episode goes (a named run stays), before
                # the client reads the answer
                await anyio.to_thread.run_sync(self.plays.end_session, session.decode("latin-1"))
            await send(message)

        await self.app(scope, receive, ending)

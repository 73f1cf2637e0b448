"""One episode per MCP session, and the HTTP gate: `Plays` (the server's episodes), run names, bearer token.

Over streamable HTTP every MCP session plays an episode of its own, keyed by the client's run name
(the URL's query `?run=NAME`, so a later session, or a client of a restarted server, continues that
run) or else by its session id. Over stdio (and the SDK's in-memory client) there is one episode,
the default one (key None). `Plays.get` opens an episode on its first call; a session that ends with
an HTTP DELETE releases an episode keyed by its id (one whose session ends otherwise, e.g. by the
SDK's idle timeout, stays open until the server stops), and `close_all` releases all at shutdown.

`Gate` wraps the streamable-HTTP app: with a token, every HTTP request must carry
`Authorization: Bearer TOKEN` (else 401); after a DELETE it releases that session's episode.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import re
import threading
from collections.abc import Callable
from typing import Any

import anyio

from autovend.errors import ConfigError
from autovend.tools.mcp_play import Play

RUN_QUERY = "run"  # ?run=NAME in the server URL names the run a client plays
SESSION_HEADER = "mcp-session-id"
_RUN_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def is_loopback(host: str) -> bool:
    """True for an address of the loopback interface (127.0.0.0/8, ::1) or `localhost`."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


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


class Plays:
    """The episodes of one server by key (see the module docstring); `make(key)` opens one."""

    def __init__(self, make: Callable[[str | None], Play]) -> None:
        self._make = make
        self._plays: dict[str | None, Play] = {}
        self._opening: dict[str | None, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, key: str | None) -> Play:
        """The episode of `key`, opened on first use (blocking: call it off the event loop)."""
        with self._lock:
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
        if play is not None:
            play.close()

    def close_all(self) -> None:
        """Close every episode."""
        with self._lock:
            plays = list(self._plays.values())
            self._plays.clear()
        for play in plays:
            play.close()


class Gate:
    """ASGI wrapper of the streamable-HTTP app: bearer token check, and episode release after DELETE."""

    def __init__(self, app: Any, plays: Plays, token: str | None = None) -> None:
        self.app = app
        self.plays = plays
        self._token = None if token is None else token.encode()

    def _authorized(self, scope: dict[str, Any]) -> bool:
        if self._token is None:
            return True
        header = dict(scope.get("headers") or []).get(b"authorization", b"")
        scheme, _, given = header.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._token)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Serve one ASGI event (lifespan events pass through)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not self._authorized(scope):
            body = json.dumps({"error": "unauthorized: send the header Authorization: Bearer <token>"}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"www-authenticate", b'Bearer realm="autovend"'),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)
        if scope.get("method") == "DELETE":
            session = dict(scope.get("headers") or []).get(SESSION_HEADER.encode())
            if session:  # the client ended its session: its unnamed episode goes (a named one stays for later)
                await anyio.to_thread.run_sync(self.plays.release, session.decode("latin-1"))

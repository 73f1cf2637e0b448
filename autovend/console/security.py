"""The console's gate (`ConsoleGate`, an ASGI middleware): who may use a console, as the MCP HTTP server decides it.

A console plays an episode for whoever reaches it, so it keeps out what a browser can be made to send:

- **Host and Origin** (DNS rebinding). A console bound to loopback answers only requests whose `Host` names a
  loopback address (`127.0.0.1:8770`, `localhost:8770`, `[::1]:8770`, any port), else 421; an `Origin`, when
  sent, must be such an address too (`http://127.0.0.1:8770`), else 403. A page of another site that rebinds
  its name to 127.0.0.1 sends its own name as `Host` and is refused, as by the MCP HTTP server (the SDK's
  check, `autovend.mcp.http.loopback_security`). A console on another address needs a token (below) and
  accepts an `Origin` only of its own site (the request's `Host`).
- **A CSRF token** for every state-changing request (any method but GET and HEAD): the header
  `X-AutoVend-CSRF` must carry the token of this console process, which only its own pages know (in
  `<meta name="autovend-csrf">`; `GET /api/csrf` for scripts on the same machine, which other sites' pages
  cannot read: no CORS). A request without it is refused (403) and changes nothing. A request that carries
  the bearer token in its `Authorization` header needs none (a browser never adds that header by itself).
- **A bearer token** when one is set (required off loopback: `autovend.access.bearer_token`, as
  `autovend serve`): every request carries `Authorization: Bearer TOKEN`, or the cookie a browser gets by
  opening any page once with `?token=TOKEN` (HttpOnly, SameSite=Strict; the address is then reloaded without
  the token), else 401.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from autovend.access import bearer_authorized, host_allowed, is_loopback, origin_allowed

CSRF_HEADER = "x-autovend-csrf"
TOKEN_COOKIE = "autovend_console_token"
TOKEN_QUERY = "token"
SAFE_METHODS = frozenset({"GET", "HEAD"})


def new_csrf_token() -> str:
    """A fresh CSRF token (256 random bits, URL-safe text)."""
    return secrets.token_urlsafe(32)


def own_location(path: str, query: str = "") -> str:
    """A `Location` on the console's own origin for a request's (decoded) `path` and a `query` already encoded.

    The path is percent-encoded (a backslash, CR, LF or any non-ASCII character cannot pass as itself) and
    starts with exactly one '/': `//evil.example/`, `///evil.example`, a slash and a backslash before a name,
    or an absolute-form `http://evil.example/` can only name a path of this console, never another site (an
    open redirect would carry the visitor, and a token in the address, away).
    """
    encoded = quote(path, safe="/;=,:@!$&'()*+-._~")
    return "/" + encoded.lstrip("/") + (f"?{query}" if query else "")


def _cookie(headers: dict[bytes, bytes], name: str) -> bytes | None:
    for part in headers.get(b"cookie", b"").split(b";"):
        key, _, value = part.strip().partition(b"=")
        if key == name.encode():
            return value
    return None


class ConsoleGate:
    """ASGI middleware applying the module docstring's checks in front of a console app."""

    def __init__(self, app: Any, *, host: str, csrf: str, token: str | None = None) -> None:
        self.app = app
        self.loopback = is_loopback(host)
        if token is None and not self.loopback:
            raise ValueError(f"a console on {host} (not loopback) needs a bearer token")
        self.csrf = csrf.encode()
        self.token = None if token is None else token.encode()
        self.cookie = b"" if token is None else quote(token, safe="").encode("ascii")  # the token, as a cookie holds it

    async def _refuse(
        self, send: Any, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        body = json.dumps({"error": message}).encode()
        extra = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": extra + (headers or [])})
        await send({"type": "http.response.body", "body": body})

    def _problem(self, scope: dict[str, Any], headers: dict[bytes, bytes]) -> tuple[int, str] | None:
        """(status, message) for a request that may not pass, None for one that may."""
        host = headers.get(b"host", b"").decode("latin-1")
        if not host_allowed(host, self.loopback):
            return 421, (
                f"this console answers only requests addressed to this machine (127.0.0.1, localhost, [::1]), "
                f"not to Host {host[:80]!r}: open it as http://127.0.0.1:<port>/"
            )
        origin = headers.get(b"origin")
        if origin is not None:
            text = origin.decode("latin-1")
            if not origin_allowed(text, host, self.loopback):
                return 403, (
                    f"requests from the page of another site ({text[:80]!r}) are refused: use the console's own page"
                )
        return None

    def _authorized(self, headers: dict[bytes, bytes]) -> tuple[bool, bool]:
        """(authorized, by the Authorization header) for the bearer token (always authorized without one)."""
        if self.token is None:
            return True, False
        if bearer_authorized(headers, self.token):
            return True, True
        cookie = _cookie(headers, TOKEN_COOKIE)
        return cookie is not None and hmac.compare_digest(cookie, self.cookie), False

    async def _login(self, scope: dict[str, Any], send: Any) -> bool:
        """`?token=TOKEN` on a GET: set the cookie and reload the address without it; True if answered."""
        if self.token is None or scope.get("method") not in SAFE_METHODS:
            return False
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [v for k, v in query if k == TOKEN_QUERY]
        if not given or not hmac.compare_digest(given[0].encode("utf-8"), self.token):
            return False
        rest = urlencode([(k, v) for k, v in query if k != TOKEN_QUERY])
        location = own_location(scope.get("root_path", "") + scope["path"], rest)
        cookie = f"{TOKEN_COOKIE}={self.cookie.decode('ascii')}; HttpOnly; SameSite=Strict; Path=/"
        headers = [(b"location", location.encode("ascii")), (b"set-cookie", cookie.encode("ascii"))]
        await send({"type": "http.response.start", "status": 303, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
        return True

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Check one HTTP request, then pass it on (other events pass through)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        problem = self._problem(scope, headers)
        if problem is not None:
            await self._refuse(send, *problem)
            return
        if await self._login(scope, send):
            return
        authorized, by_header = self._authorized(headers)
        if not authorized:
            await self._refuse(
                send,
                401,
                "unauthorized: open the console once as http://HOST:PORT/?token=<token> (the token set in its "
                "environment variable), or send the header Authorization: Bearer <token>",
                [(b"www-authenticate", b'Bearer realm="autovend-console"')],
            )
            return
        if scope.get("method") not in SAFE_METHODS and not by_header:
            given = headers.get(CSRF_HEADER.encode(), b"")
            if not hmac.compare_digest(given, self.csrf):
                await self._refuse(
                    send,
                    403,
                    f"this request changes the episode and needs the console's CSRF token in the header "
                    f"{CSRF_HEADER} (the console's page sends it; a script reads it from GET /api/csrf); nothing "
                    "was done",
                )
                return
        await self.app(scope, receive, send)


def gated_app(routes: Sequence[BaseRoute], *, host: str, csrf: str, token: str | None) -> Starlette:
    """A console app: `routes` behind `ConsoleGate`, and no redirect but the gate's own (`own_location`).

    Starlette would answer a path with a trailing slash (`/api/state/`) with a redirect to an absolute address
    built from the request's `Host`; here it is a 404, as any path that is not a route.
    """
    app = Starlette(routes=list(routes), middleware=[Middleware(ConsoleGate, host=host, csrf=csrf, token=token)])
    app.router.redirect_slashes = False
    return app

"""Who may reach a web door: the loopback rule, the Host and Origin rules and the bearer token.

The rules are shared by `autovend serve --transport http` (`autovend.mcp.http`) and `autovend console`
(`autovend.console.security`).

A door bound to a loopback address serves this machine only: a request's `Host` must name a loopback address
(`host_allowed`) and its `Origin`, when sent, too (`origin_allowed`), so a page of another site that rebinds its
name to 127.0.0.1 is refused. A door reachable from other machines requires a bearer token (`bearer_token`),
which every request then carries (`bearer_authorized`, compared exactly and in constant time); an `Origin` sent
to it must be the door's own, `http(s)://` and exactly the request's `Host` (never "contains" or "starts with").
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from autovend.errors import ConfigError


def is_loopback(host: str) -> bool:
    """True for an address of the loopback interface (127.0.0.0/8, ::1) or `localhost`."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def hostname(netloc: str) -> str | None:
    """The host name of `host[:port]` (lower case, IPv6 without brackets), None if it is not one."""
    if not netloc or any(c in netloc for c in "/?#@\\ "):
        return None
    try:
        parts = urlsplit(f"//{netloc}")
        _ = parts.port  # raises for a port that is not a number
    except ValueError:
        return None
    return parts.hostname or None


def host_allowed(host: str, loopback: bool) -> bool:
    """Whether a request's `Host` header may reach a door: on loopback, a loopback address (any port); else any."""
    if not loopback:
        return True
    name = hostname(host)
    return name is not None and is_loopback(name)


def origin_allowed(origin: str, host: str, loopback: bool) -> bool:
    """Whether a request's `Origin` header may reach a door whose request names `host`.

    On loopback: an http(s) origin on a loopback address (any port). Elsewhere: the door's own origin, whose
    `host[:port]` is exactly the request's `Host` (case aside). Anything else (`null`, another site, a name that
    only contains or starts with the door's) is refused.
    """
    try:
        parts = urlsplit(origin)
    except ValueError:
        return False
    if parts.scheme not in ("http", "https") or parts.path or parts.query or parts.fragment:
        return False
    if loopback:
        name = hostname(parts.netloc)
        return name is not None and is_loopback(name)
    return hostname(parts.netloc) is not None and parts.netloc.lower() == host.lower()


def bearer_token(host: str, token_env: str, flag: str = "--token-env") -> str | None:
    """The bearer token in the environment variable `token_env`, None if unset; required off loopback.

    Raises `ConfigError` when `host` is reachable from other machines and no token is set.
    """
    token = os.environ.get(token_env) or None
    if token is None and not is_loopback(host):
        raise ConfigError(
            f"--host {host} is reachable from other machines: clients must send a bearer token. Set it in the "
            f"environment variable {token_env} (or name another with {flag}) and start again"
        )
    return token


def bearer_authorized(headers: Mapping[bytes, bytes], token: bytes | None) -> bool:
    """True if `token` is None or the headers carry `Authorization: Bearer TOKEN` (compared in constant time)."""
    if token is None:
        return True
    scheme, _, given = headers.get(b"authorization", b"").partition(b" ")
    return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), token)

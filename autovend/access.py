"""Who may reach a web door: the loopback rule and the bearer token.

The rules are shared by `autovend serve --transport http` (`autovend.mcp.http`) and `autovend console`
(`autovend.console.security`).

A door bound to a loopback address serves this machine only; one reachable from other machines requires a bearer
token (`bearer_token`), which every request then carries (`bearer_authorized`, compared in constant time).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Mapping

from autovend.errors import ConfigError


def is_loopback(host: str) -> bool:
    """True for an address of the loopback interface (127.0.0.0/8, ::1) or `localhost`."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


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

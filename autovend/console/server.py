"""Serving a console app: in the foreground (`serve`) or on a background thread (`running`).

The console binds to 127.0.0.1 unless another host is given. Who may use it is decided by the apps' own gate
(`autovend.console.security.ConsoleGate`: Host and Origin, a CSRF token, a bearer token off loopback); how long
a request may take to arrive, by the web door's server (`autovend.webserve`: a request whose headers and body
have not arrived in full within `read_timeout_s` seconds gets 408 and its connection is closed).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from starlette.applications import Starlette

from autovend import webserve
from autovend.webserve import READ_TIMEOUT_S, free_port

DEFAULT_HOST = "127.0.0.1"

__all__ = ["DEFAULT_HOST", "READ_TIMEOUT_S", "free_port", "running", "serve"]


def serve(app: Starlette, host: str = DEFAULT_HOST, port: int = 8770, read_timeout_s: float = READ_TIMEOUT_S) -> None:
    """Serve `app` until Ctrl-C (uvicorn, warnings only in the log)."""
    webserve.serve(app, host, port, read_timeout_s=read_timeout_s)


@contextmanager
def running(
    app: Starlette, host: str = DEFAULT_HOST, port: int | None = None, read_timeout_s: float = READ_TIMEOUT_S
) -> Iterator[str]:
    """Serve `app` on a thread for the duration of the block; yields its base URL (ending in /)."""
    with webserve.running(app, host, port, read_timeout_s=read_timeout_s, lifespan="off") as url:
        yield url

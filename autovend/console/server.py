"""Serving a console app with uvicorn: in the foreground (`serve`) or on a background thread (`running`).

The console binds to 127.0.0.1 unless another host is given. Who may use it is decided by the apps' own gate
(`autovend.console.security.ConsoleGate`: Host and Origin, a CSRF token, a bearer token off loopback).
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from starlette.applications import Starlette

DEFAULT_HOST = "127.0.0.1"
START_TIMEOUT_S = 30.0


def serve(app: Starlette, host: str = DEFAULT_HOST, port: int = 8770) -> None:
    """Serve `app` until Ctrl-C (uvicorn, warnings only in the log)."""
    uvicorn.run(app, host=host, port=port, log_level="warning")


def free_port(host: str = DEFAULT_HOST) -> int:
    """A TCP port free on `host` at this moment."""
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@contextmanager
def running(app: Starlette, host: str = DEFAULT_HOST, port: int | None = None) -> Iterator[str]:
    """Serve `app` on a thread for the duration of the block; yields its base URL (ending in /)."""
    port = free_port(host) if port is None else port
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, name=f"autovend-console-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the console server did not start on {host}:{port}")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{port}/"
    finally:
        server.should_exit = True
        thread.join()

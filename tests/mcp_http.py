"""An AutoVend MCP server's streamable-HTTP app served on 127.0.0.1 inside the test process (uvicorn in a thread)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

from autovend.console.server import free_port


@contextlib.contextmanager
def served_over_http(app: Any, token: str | None = None, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve `app` (a built MCP server) over HTTP on `host` until the block ends, then close it; yields the /mcp URL."""
    import uvicorn

    port = free_port(host)
    asgi = app.http_app(host=host, token=token)
    server = uvicorn.Server(uvicorn.Config(asgi, host=host, port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://{host}:{port}/mcp"
    finally:
        server.should_exit = True
        thread.join(30)
        app.close()

"""An AutoVend MCP server's streamable-HTTP app served on 127.0.0.1 inside the test process (uvicorn in a thread)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from autovend.webserve import READ_TIMEOUT_S, running


@contextlib.contextmanager
def served_over_http(
    app: Any, token: str | None = None, host: str = "127.0.0.1", read_timeout_s: float = READ_TIMEOUT_S
) -> Iterator[str]:
    """Serve `app` (a built MCP server) over HTTP on `host` until the block ends, then close it; yields the /mcp URL.

    It is served as `autovend serve --transport http` serves it (`autovend.webserve`, the read timeout).
    """
    try:
        with running(app.http_app(host=host, token=token), host, read_timeout_s=read_timeout_s) as url:
            yield url + "mcp"
    finally:
        app.close()

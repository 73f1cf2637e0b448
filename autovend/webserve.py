"""Serving a web door with uvicorn: every request must arrive in full within a read timeout.

    serve(app, "127.0.0.1", 8770)                        # blocking, until Ctrl-C
    with running(app) as url: ...                        # on a thread, for a test or a notebook

Both doors that speak HTTP (`autovend serve --transport http`, `autovend console`) are served through here.
uvicorn waits for a request as long as its client likes: a POST that declares `Content-Length: 1000` and
sends 10 bytes, or a connection that sends half a request line, holds its connection (and, for a body, the
handler reading it) open forever, and enough of them use up the server's file descriptors. Here a request
must arrive whole, headers and body, within `read_timeout_s` seconds (default `READ_TIMEOUT_S`) of its first
byte (of the connection's opening for the first request). When the time is up:

- a request whose headers or body are cut short gets `408 Request Timeout` (a JSON `{"error": ...}` naming
  the limit) if nothing was answered yet, and its connection is closed; the handler waiting for the rest of
  the body reads a disconnect and its answer, if any, is dropped;
- a connection that sent nothing at all is closed without an answer.

A request that has arrived in full may take as long as it needs to be answered (a slow SQL query, an event
stream), and an idle kept-alive connection is closed by uvicorn after 5 s as before. The deadline is kept by
`DeadlineH11Protocol`, uvicorn's h11 protocol with a timer (uvicorn's httptools protocol, when installed, is
not used: the doors always speak h11).
"""

from __future__ import annotations

import asyncio
import json
import math
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from autovend.errors import ConfigError

READ_TIMEOUT_S = 30.0  # seconds for a request's headers and body to arrive; a 4 MiB body needs 1.1 Mbit/s
START_TIMEOUT_S = 30.0  # seconds for a server on a thread to start listening


def check_read_timeout(read_timeout_s: float) -> float:
    """`read_timeout_s` as a float if it is a finite number of seconds above 0, else `ConfigError` saying so."""
    if isinstance(read_timeout_s, bool) or not isinstance(read_timeout_s, int | float):
        raise ConfigError(f"--read-timeout must be a number of seconds, got {read_timeout_s!r}")
    if not math.isfinite(read_timeout_s) or read_timeout_s <= 0:
        raise ConfigError(
            f"--read-timeout must be a number of seconds above 0 (default {READ_TIMEOUT_S:g}), got {read_timeout_s!r}"
        )
    return float(read_timeout_s)


def timeout_answer(read_timeout_s: float) -> bytes:
    """The whole `408 Request Timeout` response (status line, headers, JSON body) that closes a connection."""
    body = json.dumps(
        {
            "error": f"the request did not arrive in full within {read_timeout_s:g} s (its headers and its body, "
            "as long as its Content-Length says); nothing was done and the connection is closed: send the whole "
            "request at once"
        }
    ).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class DeadlineH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the module docstring's read timeout (`read_timeout_s`, a class attribute)."""

    read_timeout_s: float = READ_TIMEOUT_S
    _deadline: asyncio.TimerHandle | None = None
    _heard: bool = False  # whether the connection has sent a byte

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        """Start the first request's clock at the connection's opening."""
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        """Take the bytes; a request that is now whole stops its clock, one that has begun starts it."""
        self._heard = True
        super().data_received(data)
        self._track()

    def on_response_complete(self) -> None:
        """After an answer, a request that was waiting behind it (pipelined) may have begun: track it."""
        super().on_response_complete()
        self._track()

    def connection_lost(self, exc: Exception | None) -> None:
        """Stop the clock with the connection."""
        self._disarm()
        super().connection_lost(exc)

    def _incomplete(self) -> bool:
        """True while a request has begun but its headers or its body have not all arrived."""
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            return True
        return state is h11.IDLE and bool(self.conn.trailing_data[0])

    def _track(self) -> None:
        if self._incomplete():
            if self._deadline is None:
                self._arm()
        elif self._heard:
            self._disarm()

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(self.read_timeout_s, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        """The time is up: answer 408 if the request was begun and nothing was answered, then close."""
        self._deadline = None
        if self.transport.is_closing() or (self._heard and not self._incomplete()):
            return
        cycle = self.cycle if self.conn.their_state is h11.SEND_BODY else None  # the request whose body is due
        if self._heard and (cycle is None or not cycle.response_started):  # nothing answered to it yet
            self.transport.write(timeout_answer(self.read_timeout_s))
        if cycle is not None and not cycle.response_complete:  # the handler reads a disconnect; its answer is dropped
            cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()


def deadline_protocol(read_timeout_s: float = READ_TIMEOUT_S) -> type[DeadlineH11Protocol]:
    """`DeadlineH11Protocol` with its own `read_timeout_s` (checked by `check_read_timeout`)."""
    seconds = check_read_timeout(read_timeout_s)
    return type("DeadlineH11Protocol", (DeadlineH11Protocol,), {"read_timeout_s": seconds})


def server_config(
    app: Any,
    host: str,
    port: int,
    *,
    read_timeout_s: float = READ_TIMEOUT_S,
    log_level: str = "warning",
    lifespan: str = "auto",
) -> uvicorn.Config:
    """uvicorn's settings for serving `app` on `host`:`port` with the read timeout."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=deadline_protocol(read_timeout_s),
        log_level=log_level,
        lifespan=lifespan,  # type: ignore[arg-type]
    )


def serve(
    app: Any, host: str, port: int, *, read_timeout_s: float = READ_TIMEOUT_S, log_level: str = "warning"
) -> None:
    """Serve `app` until Ctrl-C (blocking)."""
    uvicorn.Server(server_config(app, host, port, read_timeout_s=read_timeout_s, log_level=log_level)).run()


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on `host` at this moment."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as s:
        s.bind((host.strip("[]"), 0))
        return int(s.getsockname()[1])


@contextmanager
def running(
    app: Any,
    host: str = "127.0.0.1",
    port: int | None = None,
    *,
    read_timeout_s: float = READ_TIMEOUT_S,
    lifespan: str = "auto",
) -> Iterator[str]:
    """Serve `app` on a thread for the duration of the block; yields its base URL (ending in /)."""
    port = free_port(host) if port is None else port
    config = server_config(app, host, port, read_timeout_s=read_timeout_s, lifespan=lifespan)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"autovend-web-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the server did not start on {host}:{port}")
        time.sleep(0.02)
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    try:
        yield f"http://{shown}:{port}/"
    finally:
        server.should_exit = True
        thread.join(START_TIMEOUT_S)

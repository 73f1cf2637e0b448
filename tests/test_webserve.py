"""The web doors' server (`autovend.webserve`): a request must arrive in full within the read timeout.

A small ASGI app that reads the whole body is served on 127.0.0.1 with a 1 s read timeout; raw sockets send
requests cut short (a body shorter than its Content-Length, headers without their end, nothing at all, bytes
dripped one by one), and each is answered 408 (or, having sent nothing, closed) within the timeout plus a
margin, while other clients are served meanwhile. Before `autovend.webserve`, uvicorn kept every such
connection open forever (the handler waiting for the body with it).
"""

from __future__ import annotations

import http.client
import json
import math
import socket
import time
from typing import Any
from urllib.parse import urlsplit

import pytest

from autovend.errors import ConfigError
from autovend.webserve import READ_TIMEOUT_S, DeadlineH11Protocol, check_read_timeout, running, server_config

TIMEOUT_S = 1.0
MARGIN_S = 2.0  # a loaded 2-core machine: the answer comes within TIMEOUT_S + MARGIN_S
PARTIAL_BODY = b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n0123456789"


class Echo:
    """Answers a request with the size of its body (read whole) after `delay_s`; notes what its handler read."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        import anyio

        if scope["type"] != "http":
            return
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                self.seen.append(message["type"])
                break
            size += len(message.get("body", b""))
            more = message.get("more_body", False)
        else:
            self.seen.append(f"body of {size} bytes")
        delay = float(dict(scope["headers"]).get(b"x-delay", b"0"))
        await anyio.sleep(delay)
        body = json.dumps({"bytes": size}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def served():
    app = Echo()
    with running(app, read_timeout_s=TIMEOUT_S, lifespan="off") as url:
        parts = urlsplit(url)
        yield (parts.hostname, parts.port), app


def _exchange(address: tuple[str, int], chunks: list[bytes], pause_s: float = 0.0) -> tuple[bytes, float, bool]:
    """Send `chunks` (with `pause_s` between them) and read until the server closes: (bytes, seconds, closed)."""
    start = time.monotonic()
    with socket.create_connection(address) as s:
        s.settimeout(TIMEOUT_S + MARGIN_S)
        try:
            for chunk in chunks:
                s.sendall(chunk)
                time.sleep(pause_s)
        except OSError:  # the server closed the connection while the drip went on
            pass
        got = b""
        try:
            while chunk := s.recv(65536):
                got += chunk
            closed = True
        except TimeoutError:
            closed = False
        except OSError:
            closed = True
    return got, time.monotonic() - start, closed


def _ask(address: tuple[str, int], body: bytes = b"{}", delay_s: float = 0.0) -> tuple[int, Any]:
    conn = http.client.HTTPConnection(*address, timeout=30)
    try:
        conn.request("POST", "/echo", body=body, headers={"X-Delay": str(delay_s)})
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


def _status_and_error(answer: bytes) -> tuple[int, str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), json.loads(body)["error"]


@pytest.mark.parametrize(
    "chunks",
    [
        pytest.param([PARTIAL_BODY], id="body-10-of-1000-bytes"),
        pytest.param([b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\n"], id="headers-without-their-end"),
        pytest.param([b"GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r"], id="headers-cut-in-a-line-end"),
    ],
)
def test_a_request_cut_short_is_answered_408_and_closed_within_the_timeout(served, chunks):
    address, _ = served
    answer, seconds, closed = _exchange(address, chunks)
    status, error = _status_and_error(answer)
    assert closed and TIMEOUT_S - 0.05 <= seconds <= TIMEOUT_S + MARGIN_S
    assert status == 408 and error.startswith("the request did not arrive in full within 1 s")
    assert _ask(address) == (200, {"bytes": 2})  # serving goes on


def test_the_handler_waiting_for_the_rest_of_the_body_reads_a_disconnect(served):
    address, app = served
    before = len(app.seen)
    _exchange(address, [PARTIAL_BODY])
    deadline = time.monotonic() + 5
    while len(app.seen) == before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert app.seen[before:] == ["http.disconnect"]


def test_a_request_dripped_byte_by_byte_is_cut_at_the_timeout_not_at_each_byte(served):
    address, _ = served
    drip = [bytes([b]) for b in b"GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + b"x" * 40]
    answer, seconds, closed = _exchange(address, drip, pause_s=0.1)  # 4 s of drip, a byte every 0.1 s
    assert closed and seconds <= TIMEOUT_S + MARGIN_S and _status_and_error(answer)[0] == 408


def test_a_connection_that_sends_nothing_is_closed_without_an_answer(served):
    address, _ = served
    answer, seconds, closed = _exchange(address, [])
    assert (answer, closed) == (b"", True) and TIMEOUT_S - 0.05 <= seconds <= TIMEOUT_S + MARGIN_S


def test_others_are_served_while_a_request_hangs(served):
    address, _ = served
    with socket.create_connection(address) as hanging:
        hanging.sendall(PARTIAL_BODY)
        start = time.monotonic()
        answers = [_ask(address, b"x" * n) for n in (1, 10, 100)]
        seconds = time.monotonic() - start
    assert answers == [(200, {"bytes": 1}), (200, {"bytes": 10}), (200, {"bytes": 100})]
    assert seconds < TIMEOUT_S  # answered at once, not after the hanging request's timeout


def test_a_whole_request_may_take_longer_than_the_timeout_to_answer(served):
    address, _ = served
    assert _ask(address, b"abc", delay_s=TIMEOUT_S * 2) == (200, {"bytes": 3})


def test_the_next_request_on_a_kept_alive_connection_has_its_own_deadline(served):
    address, _ = served
    whole = b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}"
    answer, seconds, closed = _exchange(address, [whole, PARTIAL_BODY], pause_s=TIMEOUT_S * 0.8)
    first, _, rest = answer.partition(b'{"bytes": 2}')
    assert first.startswith(b"HTTP/1.1 200") and _status_and_error(rest)[0] == 408 and closed
    assert seconds >= TIMEOUT_S * 1.6  # the second request's clock started at its own first byte


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, True, "30"])
def test_the_read_timeout_is_a_number_of_seconds_above_0(bad):
    with pytest.raises(ConfigError, match="--read-timeout must be a number of seconds"):
        check_read_timeout(bad)


def test_the_doors_are_served_with_the_deadline_by_default():
    config = server_config(Echo(), "127.0.0.1", 1)
    assert issubclass(config.http, DeadlineH11Protocol) and config.http.read_timeout_s == READ_TIMEOUT_S == 30.0


def test_every_door_is_served_with_the_deadline(monkeypatch):
    """`autovend serve --transport http` (MCPApp.run_http) and `autovend console` (console.server.serve)."""
    from autovend.console.server import serve as serve_console
    from autovend.mcp.server import build_server
    from autovend.world.toy import toy_world

    configs: list[Any] = []

    class Recorder:
        def __init__(self, config: Any) -> None:
            configs.append(config)

        def run(self) -> None:
            pass

    monkeypatch.setattr("autovend.webserve.uvicorn.Server", Recorder)
    build_server(toy_world(3, 12, seed=0), seed=1).run_http(8765)
    serve_console(Echo())  # type: ignore[arg-type]
    build_server(toy_world(3, 12, seed=0), seed=1).run_http(8765, read_timeout_s=7)
    serve_console(Echo(), read_timeout_s=0.5)  # type: ignore[arg-type]
    assert [c.http.read_timeout_s for c in configs] == [30.0, 30.0, 7.0, 0.5]
    assert all(issubclass(c.http, DeadlineH11Protocol) for c in configs)


def test_a_client_waiting_for_100_continue_is_told_to_go_on_and_answered(served):
    """curl sends `Expect: 100-continue` with a body over 1 KiB and waits for the go-ahead before sending it."""
    address, _ = served
    with socket.create_connection(address) as s:
        s.settimeout(TIMEOUT_S + MARGIN_S)
        s.sendall(b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        go_on = s.recv(65536)
        s.sendall(b"hello")
        answer = b""
        while b'{"bytes": 5}' not in answer:
            answer += s.recv(65536)
    assert go_on.startswith(b"HTTP/1.1 100 Continue") and b"HTTP/1.1 200 OK" in answer

"""Fuzzing the tool doors: the in-process session, the MCP server through the SDK's client, MCP over stdio.

Properties, for every example: no exception and no traceback; a refused call is an error result whose message is
short, and it changes nothing (tests/fuzz.py `fingerprint`); every call, refused or not, adds exactly one line
to the trajectory, which stays valid UTF-8 JSON; over stdio every message that is no notification gets exactly
one answer (with its id, or id null when the id could not be read) and the server goes on answering.
"""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from autovend.env.boundary import episode_of
from autovend.mcp.server import build_server
from autovend.session import ToolSession
from autovend.world.model import Economics
from autovend.world.toy import toy_world

from ..fuzz import QUIET_TOOLS, arguments, dumps_hostile, fingerprint, fuzz, text, values

ROOT = Path(__file__).resolve().parents[2]
MAX_ERROR_CHARS = 2_000  # a refusal quotes the caller's values, it never repeats them


def _world():
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=40))


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory):
    session = ToolSession(_world(), seed=1, trajectory_path=tmp_path_factory.mktemp("fuzz") / "trajectory.jsonl")
    yield session
    session.close()


def _state(session: ToolSession) -> tuple[Any, ...]:
    return fingerprint(episode_of(session).sim, session.notebook)


@pytest.mark.slow
@fuzz(500)
@given(name=st.one_of(st.sampled_from(QUIET_TOOLS), text), args=arguments)
def test_session_any_call_is_a_result_and_a_refused_one_changes_nothing(fuzzed, name, args):
    session = fuzzed
    path = session.trajectory_path
    before, offset, seq = _state(session), path.stat().st_size, session.counters["seq"]
    result = session.call(name, args)
    if not result.ok:
        assert result.content == {"error": result.error} and 0 < len(result.error) < MAX_ERROR_CHARS
        assert _state(session) == before
    result.to_json().encode("utf-8")  # what is sent to an agent can always be sent
    with path.open("rb") as fh:
        fh.seek(offset)
        new = fh.read().decode("utf-8").split("\n")  # JSON lines end with \n only (a text may hold \x85, \u2028)
    assert len(new) == 2 and new[1] == ""
    record = json.loads(new[0])
    assert (record["seq"], record["ok"]) == (seq + 1, result.ok)


# ----------------------------------------------------------------------------------- MCP through the SDK client


@pytest.fixture(scope="module")
def mcp_app():
    app = build_server(_world(), seed=1)
    yield app
    app.close()


def _sdk_sendable(value: Any) -> bool:
    """True for what the SDK's client can send (it refuses lone surrogates and very deep values itself)."""
    try:
        json.dumps(value, ensure_ascii=False, allow_nan=True).encode("utf-8")
    except (ValueError, RecursionError, UnicodeEncodeError):
        return False
    return True


@pytest.mark.slow
@fuzz(200)
@given(
    name=st.one_of(st.sampled_from(QUIET_TOOLS), text).filter(_sdk_sendable),
    args=st.dictionaries(st.one_of(text, st.just("items")), values, max_size=3).filter(_sdk_sendable),
)
def test_mcp_client_any_call_is_answered_and_a_refused_one_changes_nothing(mcp_app, name, args):
    session = mcp_app.session
    before = _state(session)

    async def call() -> Any:
        async with Client(mcp_app.server) as client:
            return await client.call_tool(name, args)

    try:
        result = anyio.run(call)
    except MCPError as exc:  # a JSON-RPC error (e.g. invalid params) is an answer too
        assert exc.error.code < 0 and _state(session) == before
        return
    if result.is_error:
        assert 0 < len(result.content[0].text) < MAX_ERROR_CHARS and _state(session) == before


# ----------------------------------------------------------------------------------- MCP over stdio, raw lines

REQUESTS = ["ping", "tools/call", "tools/list", "prompts/list", "prompts/get", "resources/list", "x/unknown"]
ids = st.one_of(
    st.integers(-5, 5),
    st.text(max_size=6),
    st.sampled_from([{"a": 1}, [1], 1.5, True, False, None, "\ud800", 2**70]),
)
params = st.one_of(
    st.fixed_dictionaries({"name": st.one_of(st.sampled_from(QUIET_TOOLS), text)}, optional={"arguments": arguments}),
    values,
)
requests = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "2.0", "1.0", 2])},
    optional={"id": ids, "method": st.one_of(st.sampled_from(REQUESTS), text), "params": params},
)
notifications = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "method": st.sampled_from(["notifications/initialized", "notifications/x"])},
    optional={"params": st.dictionaries(st.text(max_size=5), values, max_size=2)},
)
lines = st.one_of(
    requests.map(lambda m: ("message", m)),
    notifications.map(lambda m: ("notification", m)),
    values.map(lambda v: ("value", v)),
    st.text(max_size=30).filter(lambda t: "\n" not in t and "\r" not in t).map(lambda t: ("text", t)),
)


class StdioServer:
    """`autovend serve --toy 3x12` in a subprocess, initialized; answers are read on a thread."""

    def __init__(self) -> None:
        cmd = [sys.executable, "-m", "autovend.cli", "serve", "--toy", "3x12", "--days", "40", "--seed", "1"]
        self.proc = subprocess.Popen(
            cmd, cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.answers: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self.answers.put(x) for x in self.proc.stdout], daemon=True).start()
        self.counter = itertools.count(1)
        init = {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": {"name": "fuzz"}}
        self.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
        assert json.loads(self.answers.get(timeout=60))["id"] == 0
        self.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read(self) -> dict[str, Any]:
        answer = json.loads(self.answers.get(timeout=60))
        assert answer["jsonrpc"] == "2.0" and ("result" in answer) != ("error" in answer)
        return answer

    def close(self) -> str:
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0
        self.proc.stdout.close()
        errors = self.proc.stderr.read()
        self.proc.stderr.close()
        return errors


@pytest.fixture(scope="module")
def stdio_server():
    server = StdioServer()
    yield server
    assert "Traceback" not in server.close()


def _expected(kind: str, message: Any, n: int) -> tuple[str, Any]:
    """('none', None) for a notification, else ('id', the id the one answer carries: its own or None)."""
    if kind == "notification":
        return "none", None
    if kind != "message" or message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        return "id", None
    # params that are no object: -32602 with the request's own id (one set of JSON-RPC codes on every door)
    given_id = message.get("id")
    if type(given_id) is int or type(given_id) is str and _unicode(given_id):
        return "id", given_id  # the SDK may still not read the line (a huge number, deep nesting): then None
    return "id", None


def _unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.slow
@fuzz(400)
@given(line=lines)
def test_stdio_every_message_but_a_notification_gets_one_answer_and_serving_goes_on(stdio_server, line):
    server = stdio_server
    kind, message = line
    n = next(server.counter)
    if kind == "message" and type(message.get("id")) is int:  # unique: a late answer is never taken for another's
        message = {**message, "id": 1_000_000 + n if abs(message["id"]) < 2**53 else message["id"] + n}
    elif kind == "message" and type(message.get("id")) is str:
        message = {**message, "id": f"{message['id']}#{n}"}
    raw = message if kind == "text" else dumps_hostile(message)
    server.send(raw)
    sync = f"sync-{n}"
    server.send(json.dumps({"jsonrpc": "2.0", "id": sync, "method": "ping"}))
    what, wanted = _expected(kind, message, n)
    got: list[dict[str, Any]] = []
    while True:  # every answer up to the ping's (an answer from a worker thread may come after it)
        answer = server.read()
        if answer["id"] == sync:
            break
        got.append(answer)
    if what == "none":  # a notification gets no answer, unless its line could not be read at all
        assert got == [] or (len(got) == 1 and got[0]["id"] is None and got[0]["error"]["code"] == -32700), got
        return
    if wanted is not None and not got:
        got.append(server.read())  # a tool call answered after the ping
    assert len(got) == 1 and got[0]["id"] in (wanted, None), (raw[:200], got)

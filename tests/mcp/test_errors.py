"""One set of JSON-RPC answers on both MCP doors: the same code, the same words, naming what is wrong and where.

Each message below is sent to a server over stdio (in this process: `MCPApp.run_stdio` fed line by line) and
over HTTP (a raw session's POST) after the handshake, and must get the same answer on both, but for where
it was (`the line`, `the request body`). Before, HTTP answered a batch, `"jsonrpc": "1.0"` or params that
were no object with -32602 and a pydantic dump, stdio with -32600 naming nothing, and both answered
`"arguments": "x"` with a bare "Invalid request parameters".
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest

from autovend.mcp.server import build_server
from autovend.world.toy import toy_world
from tests.mcp.test_http import _raw_session
from tests.mcp_http import served_over_http

CALL = '{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "get_weather", "arguments": ARGS}}'
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
PYDANTIC = ("validation error", "pydantic", "input_value", "Input should be")

# (message, code, id of the answer, what its message starts with: WHERE stands for where the message was)
CASES: list[tuple[str, int, Any, str]] = [
    ('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]', -32600, None, "Invalid Request: WHERE is a batch"),
    ("[]", -32600, None, "Invalid Request: WHERE is a batch (an array of 0 items)"),
    (
        '{"jsonrpc": "1.0", "id": 1, "method": "ping"}',
        -32600,
        None,
        'Invalid Request: "jsonrpc" in WHERE must be "2.0" (JSON-RPC 2.0); got a string ("1.0")',
    ),
    ('{"id": 1, "method": "ping"}', -32600, None, 'Invalid Request: "jsonrpc" in WHERE must be "2.0"'),
    ("5", -32600, None, "Invalid Request: WHERE is an integer (5), not a JSON-RPC message"),
    ('"x"', -32600, None, 'Invalid Request: WHERE is a string ("x"), not a JSON-RPC message'),
    ("null", -32600, None, "Invalid Request: WHERE is null, not a JSON-RPC message"),
    ('{"jsonrpc": "2.0", "id": 9, "method": 5}', -32600, None, 'Invalid Request: "method" in WHERE must be a string'),
    ('{"jsonrpc": "2.0"}', -32600, None, 'Invalid Request: WHERE has no "method"'),
    ('{"jsonrpc": "2.0", "id": 3, "result": 5}', -32600, None, 'Invalid Request: the "result" of a response in WHERE'),
    ('{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', -32600, None, "Invalid Request: 'ping' is a request"),
    (
        '{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": "x"}',
        -32602,
        5,
        'Invalid params: "params" of \'tools/call\' in WHERE must be a JSON object (or left out), got a string ("x")',
    ),
    (
        '{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": [1]}',
        -32602,
        6,
        "Invalid params: \"params\" of 'tools/call' in WHERE must be a JSON object (or left out), got an array of 1",
    ),
    (
        CALL.replace("ARGS", '"x"'),
        -32602,
        4,
        "Invalid params of 'tools/call': params.arguments must be a JSON object, got a string (\"x\")",
    ),
    (
        CALL.replace("ARGS", "[1]"),
        -32602,
        4,
        "Invalid params of 'tools/call': params.arguments must be a JSON object, got an array of 1 item",
    ),
    (
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"arguments": {}}}',
        -32602,
        7,
        "Invalid params of 'tools/call': params.name is missing (it is required)",
    ),
    (
        '{"jsonrpc": "2.0", "id": 8, "method": "prompts/get", "params": {"name": "daily", "arguments": {"a": 1}}}',
        -32602,
        8,
        "Invalid params of 'prompts/get': params.arguments.a must be a string, got an integer (1)",
    ),
    (
        '{"jsonrpc": "2.0", "id": 3, "method": "nosuch"}',
        -32601,
        3,
        "Method not found: this server has no method 'nosuch'",
    ),
    ('{"jsonrpc": "2.0", "id": 1, "method": "ping"', -32700, None, "Parse error: WHERE: not valid JSON"),
    (CALL.replace("ARGS", '{"page": NaN}'), -32700, None, "Parse error: params.arguments.page in WHERE is NaN"),
]


async def _stdio_answers(messages: list[str]) -> list[dict[str, Any]]:
    """The answer to each message, sent one at a time to a server on stdio in this process after the handshake."""
    app = build_server(toy_world(3, 12, seed=0), seed=1)
    to_server, from_test = anyio.create_memory_object_stream[bytes](16)
    to_test, answers = anyio.create_memory_object_stream[str](16)

    class Source:
        async def read1(self, size: int = -1, /) -> bytes:
            try:
                return await from_test.receive()
            except anyio.EndOfStream:
                return b""

    class Out:
        async def write(self, text: str) -> None:
            await to_test.send(text)

        async def flush(self) -> None:
            pass

    async def ask(line: str) -> dict[str, Any]:
        await to_server.send(line.encode() + b"\n")
        with anyio.fail_after(30):  # a message that got no answer fails here
            return dict(json.loads(await answers.receive()))

    got = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(app.run_stdio, Source(), Out())
        assert (await ask(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})))["id"] == 0
        await to_server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
        for message in messages:
            got.append(await ask(message))
        await to_server.aclose()
    app.close()
    return got


def _http_answers(messages: list[str]) -> list[tuple[int, dict[str, Any]]]:
    """(HTTP status, answer) of each message POSTed in a raw session after the handshake."""
    app = build_server(toy_world(3, 12, seed=0), seed=1)
    got = []
    with served_over_http(app) as url:
        _, headers = _raw_session(url)
        for message in messages:
            answer = httpx2.post(url, content=message, headers=headers, timeout=30)
            if answer.headers["content-type"].startswith("text/event-stream"):
                data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:") and line[5:].strip()]
                got.append((answer.status_code, json.loads(data[-1])))
            else:
                got.append((answer.status_code, answer.json()))
    return got


def _check(answer: dict[str, Any], code: int, answer_id: Any, start: str, where: str) -> None:
    message = answer["error"]["message"]
    assert (answer["id"], answer["error"]["code"]) == (answer_id, code), answer
    assert message.startswith(start.replace("WHERE", where)), message
    assert not any(word in message for word in PYDANTIC) and len(message) < 400


@pytest.fixture(scope="module")
def stdio_answers() -> list[dict[str, Any]]:
    return anyio.run(_stdio_answers, [message for message, *_ in CASES])


@pytest.fixture(scope="module")
def http_answers() -> list[tuple[int, dict[str, Any]]]:
    return _http_answers([message for message, *_ in CASES])


@pytest.mark.parametrize(("index", "case"), list(enumerate(CASES)), ids=[f"{i}" for i in range(len(CASES))])
def test_stdio_answers_in_words_with_the_json_rpc_code(stdio_answers, index, case):
    message, code, answer_id, start = case
    _check(stdio_answers[index], code, answer_id, start, "the line")


@pytest.mark.parametrize(("index", "case"), list(enumerate(CASES)), ids=[f"{i}" for i in range(len(CASES))])
def test_http_answers_the_same_code_and_words(http_answers, index, case):
    message, code, answer_id, start = case
    status, answer = http_answers[index]
    _check(answer, code, answer_id, start, "the request body")
    # refused at the door: 400; a request that reached the session is answered in its event stream (200)
    assert status == (200 if code == -32601 or start.startswith("Invalid params of") else 400)


def test_both_doors_give_the_same_answers(stdio_answers, http_answers):
    def same(answer: dict[str, Any]) -> str:
        text = json.dumps(answer).replace("the request body", "WHERE").replace("the line", "WHERE")
        return text.replace("one per POST", "one per line")  # how a batch is to be sent instead

    assert [same(a) for a in stdio_answers] == [same(a) for _, a in http_answers]

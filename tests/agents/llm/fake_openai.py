"""A scripted OpenAI-compatible Chat Completions server on 127.0.0.1 for the harness tests.

    with FakeOpenAI(script) as server:                       # a random free port
        agent = build_llm_agent("openai:fake", base_url=server.base_url)

It answers POST /v1/chat/completions like a real server (tool calls, finish reasons, usage with
cached prompt tokens), so the real `openai` client, HTTP and the harness's tool plumbing are all
exercised. What it answers is decided by a script from the request alone (the day read from the
latest daily prompt "Day N of H — ...", the turn = replies since that prompt + 1, and the latest
tool results), so a killed and resumed run gets the same answers as an uninterrupted one.

Usage it reports (deterministic): prompt_tokens = characters of the messages and tools JSON // 4;
cached_tokens = the previous request's prompt_tokens when that request's messages are a prefix of
this one's (a prompt cache), else 0; completion_tokens = characters of the reply JSON // 4 + 1.

Request rules: every request body is checked against the message rules of the OpenAI API and of the
llama.cpp server (`server_rules.all_rules`) before it is answered, and refused as that server would
(the refused bodies are kept in `refused`), so every harness test also checks that what the harness
sends is taken by both; `rules=fn` sets other rules, `rules=None` none.

Faults: `faults={n: Fault(status=429)}` answers the n-th request (1-based) with that status once
(the retried request counts as the next request); `fail_from=n` answers every request from the
n-th on with 500; `hang_at=(day, turn)` holds that request (sets `hung`) until `release` is set,
so a test can kill the client process while it waits.

Run it alone: `python tests/agents/llm/fake_openai.py` prints its base URL and serves the default script.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DAY_RE = re.compile(r"Day (\d+) of (\d+) — ")
MACHINE, SKU_A, SKU_B = "CN_WORKSITE_01", "SKU0001", "SKU0002"


@dataclass(frozen=True)
class Call:
    """One tool call of a scripted reply; `arguments` is a dict (sent as JSON) or raw text sent as is."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)


@dataclass(frozen=True)
class Reply:
    """A scripted assistant reply: tool calls and/or text."""

    calls: tuple[Call, ...] = ()
    content: str | None = None
    ids: tuple[str | None, ...] | None = None  # the calls' ids as sent (None: no id); default call_DAY_TURN_I


@dataclass(frozen=True)
class Fault:
    """An HTTP error answered instead of a completion."""

    status: int = 429
    retry_after: float | None = None
    message: str | None = None
    param: str | None = None  # the request field named in the error body (OpenAI's `param`)
    kind: str | None = None  # the error body's `type` (default: by status)


@dataclass
class Request:
    """What the script sees of a request."""

    body: dict[str, Any]
    day: int | None
    horizon: int | None
    turn: int
    prompt: str  # the latest daily prompt (with any harness note before it)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.body["messages"]

    def tool_results(self) -> dict[str, Any]:
        """The results (decoded JSON) of the tool calls of the last reply, by tool name."""
        out: dict[str, Any] = {}
        last = max((i for i, m in enumerate(self.messages) if m["role"] == "assistant"), default=-1)
        if last < 0:
            return out
        names = {tc["id"]: tc["function"]["name"] for tc in self.messages[last].get("tool_calls") or ()}
        for m in self.messages[last + 1 :]:
            if m["role"] == "tool":
                try:
                    out[names.get(m["tool_call_id"], "?")] = json.loads(m["content"])
                except json.JSONDecodeError:
                    out[names.get(m["tool_call_id"], "?")] = m["content"]
        return out

    @property
    def is_workday(self) -> bool:
        return '"is_workday": true' in self.prompt


def parse_request(body: dict[str, Any]) -> Request:
    """Day, horizon and turn of a request (see the module docstring)."""
    messages = body.get("messages", [])
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if m.get("role") == "user" and isinstance(m.get("content"), str):
            found = DAY_RE.search(m["content"])
            if found:
                turn = 1 + sum(1 for x in messages[i + 1 :] if x.get("role") == "assistant")
                return Request(body, int(found.group(1)), int(found.group(2)), turn, m["content"])
    return Request(body, None, None, 1, "")


def default_script(req: Request) -> Reply:
    """A plain operator: day 1 orders two products and writes a note; later days check the warehouse,
    restock the first machine on workdays when both products are in, read the notebook on day 5."""
    if req.day == 1:
        if req.turn == 1:
            return Reply(
                (
                    Call("write_memory", {"text": f"Plan: sell {SKU_A} and {SKU_B} at {MACHINE}."}),
                    Call("place_order", {"items": [{"sku_id": SKU_A, "qty": 40}, {"sku_id": SKU_B, "qty": 40}]}),
                ),
                content="Ordering the first stock.",
            )
        return Reply((Call("end_day"),))
    if req.turn == 1:
        calls = [Call("get_warehouse")]
        if req.day == 5:
            calls.append(Call("read_memory"))
        return Reply(tuple(calls))
    if req.turn == 2:
        wh = req.tool_results().get("get_warehouse") or {}
        units = {row[0]: row[2] for row in wh.get("rows", [])}
        if req.is_workday and units.get(SKU_A, 0) >= 10 and units.get(SKU_B, 0) >= 10:
            items = [{"device_id": MACHINE, "sku_id": s, "qty": 10} for s in (SKU_A, SKU_B)]
            return Reply((Call("restock", {"items": items}),))
    return Reply((Call("end_day"),), content="Done for today.")


def _chars(obj: Any) -> int:
    return len(json.dumps(obj, ensure_ascii=False, separators=(",", ":")))


class FakeOpenAI:
    """The server (see the module docstring); a context manager that starts and stops it."""

    def __init__(
        self,
        script: Callable[[Request], Reply] = default_script,
        *,
        faults: dict[int, Fault] | None = None,
        fail_from: int | None = None,
        hang_at: tuple[int, int] | None = None,
        report_usage: bool = True,
        rules: Callable[[dict[str, Any]], Fault | None] | None | str = "real",
        port: int = 0,
    ) -> None:
        if rules == "real":
            from tests.agents.llm.server_rules import all_rules

            rules = all_rules
        assert rules is None or callable(rules)
        self.script = script
        self.rules = rules
        self.refused: list[dict[str, Any]] = []  # bodies a rule refused
        self.faults = dict(faults or {})
        self.fail_from = fail_from
        self.hang_at = hang_at
        self.report_usage = report_usage
        self.requests: list[dict[str, Any]] = []  # every request body, in order (faults included)
        self.answered: list[dict[str, Any]] = []  # the completions sent
        self.hung = threading.Event()
        self.release = threading.Event()
        self._lock = threading.Lock()
        self._last_messages: list[dict[str, Any]] | None = None
        self._last_prompt_tokens = 0
        self.port = port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep the test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                status, payload, headers = fake.handle(body)
                self._send(status, payload, headers)

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def handle(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """The status, JSON payload and headers answering one request."""
        with self._lock:
            self.requests.append(body)
            n = len(self.requests)
            fault = self.faults.pop(n, None)
        if fault is None and self.rules is not None:
            fault = self.rules(body)
            if fault is not None:
                self.refused.append(body)
        if fault is not None or (self.fail_from is not None and n >= self.fail_from):
            fault = fault or Fault(status=500)
            headers = {} if fault.retry_after is None else {"Retry-After": str(fault.retry_after)}
            kind = fault.kind or ("rate_limit_exceeded" if fault.status == 429 else "server_error")
            text = fault.message or f"scripted {fault.status}"
            return fault.status, {"error": {"message": text, "type": kind, "param": fault.param}}, headers
        req = parse_request(body)
        if self.hang_at is not None and (req.day, req.turn) == self.hang_at:
            self.hung.set()
            while not self.release.wait(0.05):
                pass
        reply = self.script(req)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.calls:
            ids = reply.ids or tuple(f"call_{req.day}_{req.turn}_{i}" for i in range(len(reply.calls)))
            message["tool_calls"] = [
                {
                    **({} if call_id is None else {"id": call_id}),
                    "type": "function",
                    "function": {
                        "name": c.name,
                        "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments),
                    },
                }
                for c, call_id in zip(reply.calls, ids, strict=True)
            ]
        with self._lock:
            prompt_tokens = (_chars(body.get("messages")) + _chars(body.get("tools") or [])) // 4
            last = self._last_messages
            msgs = body.get("messages", [])
            cached = self._last_prompt_tokens if last is not None and msgs[: len(last)] == last else 0
            self._last_messages, self._last_prompt_tokens = msgs, prompt_tokens
        completion_tokens = _chars(message) // 4 + 1
        payload: dict[str, Any] = {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body.get("model", "fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.calls else "stop"}],
        }
        if self.report_usage:
            payload["usage"] = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                "prompt_tokens_details": {"cached_tokens": cached},
            }
        with self._lock:
            self.answered.append(payload)
        return 200, payload, {}


if __name__ == "__main__":  # [--port N] [--hang-at DAY TURN]: prints its URL, then "hung" when it holds a request
    import argparse
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[3]))  # for tests.agents.llm
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--hang-at", type=int, nargs=2, default=None)
    args = parser.parse_args()
    with FakeOpenAI(port=args.port, hang_at=tuple(args.hang_at) if args.hang_at else None) as server:
        print(server.base_url, flush=True)
        try:
            server.hung.wait()
            print("hung", flush=True)
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass

"""The lines of MCP over stdio, read by the JSON rules of every door before the SDK sees them.

The SDK's stdio transport reads stdin line by line with no bound on a line's length and parses each with
pydantic, which takes the last of two equal keys and reads NaN. Here stdin is read in chunks: a line longer
than `MAX_LINE_BYTES` (the SDK's own limit of an HTTP request body, 4 MiB) is skipped to its end without
being held, and every other line is first read by `autovend.tools.guard.loads` (no key twice, no NaN or
infinity, integers within 2^53, at most 32 levels, UTF-8 text), then checked as a JSON-RPC message
(`autovend.mcp.jsonrpc.message_problem`: no batch, an object with "jsonrpc": "2.0", a string method, a valid
id on a request, params an object). A line refused is handed to the SDK as a line that is not JSON, and its
answer waits in `refusals`: a Parse error (-32700, id null) that carries the guard's reason, or the message's
Invalid Request (-32600) or Invalid params (-32602); `autovend.mcp.server.AnswerBadLines` sends it, and
serving goes on. Over HTTP the gate (`autovend.mcp.http.Gate`) gives a body the same answers.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from typing import Protocol

import mcp_types as types
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from pydantic import ValidationError

from autovend.mcp.jsonrpc import message_problem, parse_error
from autovend.tools.guard import InputError, loads

MAX_LINE_BYTES = DEFAULT_MAX_REQUEST_BODY_SIZE  # 4 MiB, as a request body over HTTP
CHUNK_BYTES = 1 << 16
# What the SDK is handed in place of a refused line: not JSON, so it reports the line as unreadable
REFUSED_LINE = "refused by autovend.tools.guard\n"


class ByteSource(Protocol):
    """Where the bytes come from: stdin's buffer wrapped by anyio (or a test's stand-in)."""

    async def read1(self, size: int = -1, /) -> bytes:
        """At most `size` bytes, at least one unless the input has ended (then none)."""
        ...


class GuardedLines:
    """stdin's lines for the SDK's stdio transport (module docstring); `refusals` holds the answers in order."""

    def __init__(self, source: ByteSource, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._source = source
        self.max_line_bytes = max_line_bytes
        self.refusals: deque[types.JSONRPCError] = deque()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        held = bytearray()
        skipped = 0  # bytes of a line over the limit, dropped as they come
        while True:
            chunk = await self._source.read1(CHUNK_BYTES)
            if not chunk:
                if skipped:
                    yield self._too_long(skipped)
                elif held.strip():
                    yield self._checked(bytes(held))
                return
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                piece = chunk[start:end]
                start = end + 1
                if skipped:
                    yield self._too_long(skipped + len(piece))
                    skipped = 0
                elif len(held) + len(piece) > self.max_line_bytes:
                    yield self._too_long(len(held) + len(piece))
                    held.clear()
                else:
                    held += piece
                    line, held = bytes(held), bytearray()
                    yield self._checked(line)
            rest = chunk[start:]
            if skipped:
                skipped += len(rest)
            elif len(held) + len(rest) > self.max_line_bytes:
                skipped = len(held) + len(rest)
                held.clear()
            else:
                held += rest

    def _checked(self, line: bytes) -> str:
        try:
            message = loads(line, "the line", max_chars=self.max_line_bytes, max_text_chars=self.max_line_bytes)
        except InputError as exc:
            self.refusals.append(parse_error(str(exc)))
            return REFUSED_LINE
        problem = message_problem(message, "the line")
        if problem is not None:
            self.refusals.append(problem)
            return REFUSED_LINE
        return line.decode("utf-8-sig") + "\n"

    def _too_long(self, size: int) -> str:
        self.refusals.append(
            parse_error(
                f"the line is {size:,} bytes, over the limit of {self.max_line_bytes:,}; it was skipped without "
                "being read"
            )
        )
        return REFUSED_LINE


def refusal_of(item: Exception, lines: GuardedLines | None) -> types.JSONRPCError | None:
    """The answer to the unreadable line `item` stands for, if it was one of the refused lines."""
    if lines is None or not lines.refusals or not isinstance(item, ValidationError):
        return None
    if any(e.get("type") == "json_invalid" for e in item.errors()):
        return lines.refusals.popleft()
    return None

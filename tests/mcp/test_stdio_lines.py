"""The guarded stdin of MCP over stdio (`autovend.mcp.stdio`): lines across chunks, the length limit, the guard."""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
from pydantic import ValidationError

from autovend.mcp.jsonrpc import parse_error
from autovend.mcp.stdio import REFUSED_LINE, GuardedLines, refusal_of


class Chunks:
    """A byte source handing out the given chunks, one per read."""

    def __init__(self, *chunks: bytes) -> None:
        self._chunks = list(chunks)

    async def read1(self, size: int = -1, /) -> bytes:
        chunk = self._chunks.pop(0) if self._chunks else b""
        assert size > 0 and len(chunk) <= size
        return chunk


def _read(source: Chunks, limit: int = 64) -> tuple[list[str], list[str]]:
    """(the lines handed to the SDK, the messages of the answers waiting for the refused ones)."""
    lines = GuardedLines(source, max_line_bytes=limit)

    async def collect() -> list[str]:
        return [line async for line in lines]

    return anyio.run(collect), [answer.error.message for answer in lines.refusals]


def _note(name: str, size: int | None = None) -> bytes:
    """A JSON-RPC notification (a message the guard lets through), padded to `size` bytes if given."""
    line = b'{"jsonrpc": "2.0", "method": "notifications/' + name.encode() + b'"}'
    return line if size is None else line[:-2] + b"x" * (size - len(line)) + b'"}'


def test_lines_are_put_together_across_chunks_and_the_last_needs_no_newline():
    first, second, third = _note("a"), _note("b"), _note("\u00e9")  # the last: "é", two bytes in UTF-8
    cut = third.index(b"\xc3") + 1
    got, refused = _read(Chunks(first + b"\n" + second[:9], second[9:] + b"\n\n", third[:cut], third[cut:]))
    assert got == [first.decode() + "\n", second.decode() + "\n", REFUSED_LINE, third.decode() + "\n"]
    assert refused == [
        "Parse error: the line: not valid JSON (Expecting value at line 1 column 1, character 0); send one JSON-RPC "
        "message as one JSON object"
    ]


def test_a_line_of_exactly_the_limit_is_read_one_byte_more_is_skipped_unread():
    at, over = _note("k", 64), _note("k", 65)
    assert len(at) == 64 and len(over) == 65
    got, refused = _read(Chunks(at + b"\n" + over + b"\n" + _note("n") + b"\n"))
    assert got == [at.decode() + "\n", REFUSED_LINE, _note("n").decode() + "\n"]
    assert refused == [
        "Parse error: the line is 65 bytes, over the limit of 64; it was skipped without being read; send one "
        "JSON-RPC message as one JSON object"
    ]


def test_a_line_over_the_limit_spread_over_many_chunks_is_counted_and_never_held():
    source = Chunks(b"[" + b"1," * 40, b"1," * 400, b"1]\n", _note("ok") + b"\n")
    got, refused = _read(source)
    assert got == [REFUSED_LINE, _note("ok").decode() + "\n"]
    assert len(refused) == 1 and f"the line is {1 + 80 + 800 + 2:,} bytes, over the limit of 64" in refused[0]
    got, refused = _read(Chunks(b"[" + b"1," * 100))  # cut off at the end of the input
    assert got == [REFUSED_LINE] and "201 bytes" in refused[0]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"id": 1, "id": 2}', "the line: the key 'id' is given twice"),
        (b'{"x": NaN}', "x in the line is NaN, which is not JSON"),
        (
            b'{"x": 9007199254740993}',
            "x in the line is 9,007,199,254,740,993, outside the integers JSON readers hold exactly",
        ),
        (b"[" * 40 + b"]" * 40, "in the line is nested deeper than 32 levels"),
        (b'{"x": "\xff"}', "the line: not UTF-8 text"),
    ],
)
def test_the_guard_refuses_what_the_sdk_would_take(line, reason):
    got, refused = _read(Chunks(line + b"\n"), limit=4096)
    assert got == [REFUSED_LINE] and refused[0].startswith("Parse error: ") and reason in refused[0]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b"[]", "Invalid Request: the line is a batch (an array of 0 items)"),
        (b'{"a": 1}', 'Invalid Request: "jsonrpc" in the line must be "2.0" (JSON-RPC 2.0); it is missing'),
        (b'{"jsonrpc": "2.0", "id": 1}', 'Invalid Request: the line has no "method"'),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "m", "params": 7}', "Invalid params: \"params\" of 'm' in the line"),
    ],
)
def test_a_line_that_is_no_json_rpc_message_is_refused_with_its_answer(line, message):
    got, refused = _read(Chunks(line + b"\n"), limit=4096)
    assert got == [REFUSED_LINE] and refused[0].startswith(message)


def test_a_refused_line_is_paired_with_its_answer_and_other_bad_lines_are_not():
    lines = GuardedLines(Chunks(), max_line_bytes=64)
    answer = parse_error("the reason")
    lines.refusals.append(answer)
    with pytest.raises(ValidationError) as structure:  # JSON, but no JSON-RPC message: not one of ours
        types.jsonrpc_message_adapter.validate_json('{"jsonrpc": "2.0", "id": 1}')
    assert refusal_of(structure.value, lines) is None and list(lines.refusals) == [answer]
    with pytest.raises(ValidationError) as stand_in:
        types.jsonrpc_message_adapter.validate_json(REFUSED_LINE)
    assert refusal_of(stand_in.value, lines) is answer and not lines.refusals
    assert refusal_of(stand_in.value, None) is None

"""The guarded stdin of MCP over stdio (`autovend.mcp.stdio`): lines across chunks, the length limit, the guard."""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
from pydantic import ValidationError

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
    lines = GuardedLines(source, max_line_bytes=limit)

    async def collect() -> list[str]:
        return [line async for line in lines]

    return anyio.run(collect), list(lines.refusals)


def test_lines_are_put_together_across_chunks_and_the_last_needs_no_newline():
    got, refused = _read(Chunks(b'{"a": 1}\n{"b"', b": [1, 2]}\n\n", b'{"c": "\xc3', b'\xa9"}'))
    assert got == ['{"a": 1}\n', '{"b": [1, 2]}\n', REFUSED_LINE, '{"c": "é"}\n']
    assert refused == ["the line: not valid JSON (Expecting value at line 1 column 1, character 0)"]


def test_a_line_of_exactly_the_limit_is_read_one_byte_more_is_skipped_unread():
    at = b'{"k": "' + b"x" * (64 - 9) + b'"}'  # 64 bytes
    over = b'{"k": "' + b"x" * (64 - 8) + b'"}'  # 65 bytes
    assert len(at) == 64 and len(over) == 65
    got, refused = _read(Chunks(at + b"\n" + over + b"\n" + b"[]\n"))
    assert got == [at.decode() + "\n", REFUSED_LINE, "[]\n"]
    assert refused == ["the line is 65 bytes, over the limit of 64; it was skipped without being read"]


def test_a_line_over_the_limit_spread_over_many_chunks_is_counted_and_never_held():
    source = Chunks(b"[" + b"1," * 40, b"1," * 400, b"1]\n", b'{"ok": true}\n')
    got, refused = _read(source)
    assert got == [REFUSED_LINE, '{"ok": true}\n']
    assert refused == [
        f"the line is {1 + 80 + 800 + 2:,} bytes, over the limit of 64; it was skipped without being read"
    ]
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
    assert got == [REFUSED_LINE] and reason in refused[0]


def test_a_refused_line_is_paired_with_its_reason_and_other_bad_lines_are_not():
    lines = GuardedLines(Chunks(), max_line_bytes=64)
    lines.refusals.append("the reason")
    with pytest.raises(ValidationError) as structure:  # JSON, but no JSON-RPC message: not one of ours
        types.jsonrpc_message_adapter.validate_json('{"jsonrpc": "2.0", "id": 1}')
    assert refusal_of(structure.value, lines) is None and list(lines.refusals) == ["the reason"]
    with pytest.raises(ValidationError) as stand_in:
        types.jsonrpc_message_adapter.validate_json(REFUSED_LINE)
    assert refusal_of(stand_in.value, lines) == "the reason" and not lines.refusals
    assert refusal_of(stand_in.value, None) is None

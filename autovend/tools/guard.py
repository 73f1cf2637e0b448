"""What a caller may send through any door: one rule set for a tool call's arguments and the JSON texts they come in.

Every way in (the in-process `ToolSession` and `VendingEnv`, the gymnasium env, the MCP server over stdio and
HTTP, the web console, the LLM harness reading a model's tool calls) applies these rules, so the same input gets
the same answer everywhere. They follow I-JSON (RFC 7493), the profile of JSON that every reader handles alike:

- **Unicode text.** A string or key holding a lone UTF-16 surrogate (U+D800-U+DFFF, e.g. from a JSON escape of
  one half of a pair) is no Unicode text and cannot be written to a UTF-8 file or page: refused. NUL
  and other control characters are text and pass.
- **Integers** lie within +-(2^53 - 1) = +-9,007,199,254,740,991 (`MAX_INTEGER`), the range every JSON reader
  holds exactly; no tool takes a larger one.
- **Nesting**: at most `MAX_DEPTH` (32) levels of objects and arrays (tool arguments use 3).
- **Size**: the arguments, written as compact JSON, take at most `MAX_ARGUMENTS_CHARS` (131,072) characters.
- **Keys** are strings (JSON has no other).

A JSON text read by `loads` must also be UTF-8 with no key twice in one object (JSON readers disagree on which
copy wins, so the call would mean different things to different readers), no `NaN` or `Infinity` (not JSON),
no number too large for a double (`1e999`), and at most `MAX_TEXT_CHARS` characters. Non-finite floats passed
in process are left to the tools, whose argument models refuse them with their own message.

Each breach raises `InputError` (a `ToolError`) naming where it is ("items[2].qty in the arguments") and the fix.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from autovend.tools.errors import ToolError

MAX_DEPTH = 32  # levels of objects and arrays
MAX_INTEGER = 2**53 - 1  # I-JSON: integers every JSON reader holds exactly
MAX_ARGUMENTS_CHARS = 1 << 17  # characters of a call's arguments as compact JSON (131,072)
MAX_TEXT_CHARS = 1 << 20  # characters of a JSON text before it is parsed (1,048,576)
_WHERE_CHARS = 120  # a location longer than this is shortened in a message
_ESCAPE_FACTOR = 6  # the longest JSON escape of one character (\u0000) is 6 characters


class InputError(ToolError):
    """Input that breaks the rules of this module; the message names where and how to fix it.

    `too_large`: the input is over a size limit (an HTTP door answers 413 instead of 400). `recordable`: False
    when the value cannot be written to a trajectory as it is (too large, too deep, a huge integer); the
    trajectory then holds a short description in its place.
    """

    def __init__(self, message: str, *, too_large: bool = False, recordable: bool = True) -> None:
        super().__init__(message)
        self.too_large = too_large
        self.recordable = recordable


# ---------------------------------------------------------------------------------------------- locations


def _part(key: object) -> str:
    if isinstance(key, int):
        return f"[{key}]"
    text = str(key)
    if text.isidentifier() and text.isascii() and len(text) <= 40:
        return f".{text}"
    return f"[{_short_repr(text)}]"


def _short_repr(text: str, limit: int = 40) -> str:
    """repr() of a caller's string, at most about `limit` characters (repr escapes surrogates, so it is safe)."""
    if len(text) <= limit:
        return repr(text)
    return repr(text[:limit])[:-1] + f"...' ({len(text):,} characters)"


def kind_of(value: Any) -> str:
    """What a value read from JSON is, in JSON's words: `a string ("x")`, `an integer (5)`, `an array of 2 items`.

    Every door names what it got with it (never Python's `str`, `list` or `NoneType`).
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"a string ({json.dumps(value if len(value) <= 40 else value[:40] + '...')})"
    if isinstance(value, int):
        return f"an integer ({value})" if abs(value) < 10**15 else "an integer"
    if isinstance(value, float):
        return f"a number ({value:g})"
    if isinstance(value, list | tuple):
        return f"an array of {len(value)} item{'' if len(value) == 1 else 's'}"
    if isinstance(value, Mapping):
        return "an object"
    return f"a Python {type(value).__name__}, which is no JSON value"


def where_of(root: str, path: tuple[object, ...]) -> str:
    """A place in a value: `root` itself, or e.g. "items[2].qty in the arguments"; a very deep one is shortened."""
    if not path:
        return root
    text = "".join(_part(p) for p in path).removeprefix(".")
    if len(text) > _WHERE_CHARS:
        text = f"{text[: _WHERE_CHARS - 30]}... ({len(path)} levels down)"
    return f"{text} in {root}"


# ---------------------------------------------------------------------------------------------- markers


class _Marker:
    """Stands in, in a parsed JSON text, for a value `loads` refuses; the check reports it with its location."""

    def problem(self, where: str) -> InputError:
        raise NotImplementedError


class _BigInteger(_Marker):
    def __init__(self, digits: int) -> None:
        self.digits = digits

    def problem(self, where: str) -> InputError:
        return _integer_error(where, f"an integer of {self.digits:,} digits")


class _Constant(_Marker):
    def __init__(self, name: str) -> None:
        self.name = name

    def problem(self, where: str) -> InputError:
        return InputError(
            f"{where} is {self.name}, which is not JSON (JSON has no NaN or Infinity); send a finite number"
        )


class _Overflow(_Marker):
    def __init__(self, literal: str) -> None:
        self.literal = literal

    def problem(self, where: str) -> InputError:
        return InputError(
            f"{where} is the number {_short_repr(self.literal, 30)}, too large for a double (it reads as infinity); "
            "send a finite number"
        )


class _Duplicates(dict[str, Any]):
    """An object with a key given twice (the first repeated key is `key`)."""

    key: str = ""


def _integer_error(where: str, what: str) -> InputError:
    return InputError(
        f"{where} is {what}, outside the integers JSON readers hold exactly (at most {MAX_INTEGER:,} = 2^53-1 "
        "in size); send a smaller number",
        recordable=False,
    )


# ---------------------------------------------------------------------------------------------- the check


def _text_error(where: str, text: str, exc: UnicodeEncodeError) -> InputError:
    bad = ord(text[exc.start])
    return InputError(
        f"{where} holds a lone UTF-16 surrogate (U+{bad:04X}) at character {exc.start + 1:,}: that is no Unicode "
        "text and cannot be stored. Send valid Unicode (in JSON a surrogate escape such as \\ud83d must be "
        "followed by its pair, e.g. \\ud83d\\ude00)"
    )


def _too_large(where: str, size: int, limit: int, at_least: bool) -> InputError:
    amount = "" if at_least else f" {size:,} characters as JSON,"
    return InputError(
        f"{where}:{amount} over the limit of {limit:,} characters as JSON; send less (a shorter text, a smaller batch)",
        too_large=True,
        recordable=False,
    )


def check(
    value: Any, where: str = "the arguments", *, max_chars: int = MAX_ARGUMENTS_CHARS, json_numbers: bool = False
) -> None:
    """Raise `InputError` if `value` breaks the rules of the module docstring; `where` names it in the message.

    json_numbers: also refuse non-finite floats (a JSON text cannot hold them; in process the tools refuse them).
    The walk is iterative and stops at the first problem or once the size is over the limit, so a value nested
    100,000 deep or a list of a million items costs little.
    """
    size = 0  # characters of compact JSON, not counting escapes inside strings (a lower bound)
    # a node: (value, its parent node, its key or index in the parent, its depth); paths are built only for a message
    stack: list[_Node] = [(value, None, None, 0)]
    while stack:
        node = stack.pop()
        v, depth = node[0], node[3]
        if isinstance(v, str):
            size += len(v) + 2
            if not v.isascii():
                _check_text(v, where, node)
        elif v is None or isinstance(v, bool):
            size += 4 + (v is False)
        elif isinstance(v, int):
            if not -MAX_INTEGER <= v <= MAX_INTEGER:
                digits = int(v.bit_length() * math.log10(2)) + 1
                what = f"{v:,}" if digits <= 40 else f"an integer of about {digits:,} digits"
                raise _integer_error(_where(where, node), what)
            size += len(str(v))
        elif isinstance(v, float):
            if json_numbers and not math.isfinite(v):
                raise _Constant(repr(v)).problem(_where(where, node))
            size += len(repr(v))
        elif isinstance(v, Mapping | list | tuple):
            size += _container(v, where, node, depth, stack)
        elif isinstance(v, _Marker):
            raise v.problem(_where(where, node))
        else:
            size += 2  # another Python object: the tool's argument model refuses it with its own message
        if size > max_chars:
            raise _too_large(where, size, max_chars, at_least=True)
    if size * _ESCAPE_FACTOR > max_chars:  # escapes might take it over: measure the JSON itself
        exact = len(json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr))
        if exact > max_chars:
            raise _too_large(where, exact, max_chars, at_least=False)


_Node = tuple[Any, Any, Any, int]


def _where(root: str, node: _Node) -> str:
    path: list[object] = []
    while node[1] is not None:
        path.append(node[2])
        node = node[1]
    return where_of(root, tuple(reversed(path)))


def _check_text(text: str, where: str, node: _Node) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _text_error(_where(where, node), text, exc) from None


def _container(
    v: Mapping[Any, Any] | list[Any] | tuple[Any, ...], where: str, node: _Node, depth: int, stack: list[_Node]
) -> int:
    """Check an object or array and push its items on `stack` (last first); returns its own characters."""
    if depth >= MAX_DEPTH:
        raise InputError(
            f"{_where(where, node)} is nested deeper than {MAX_DEPTH} levels of objects and arrays; tool arguments "
            "need at most 3 (e.g. items[0].qty): send a flatter value",
            recordable=False,
        )
    if isinstance(v, _Duplicates):
        raise InputError(
            f"{_where(where, node)}: the key {_short_repr(v.key)} is given twice; send each key once in an object "
            "(readers disagree on which copy counts)"
        )
    size = 1 + max(len(v), 1)  # brackets and commas
    if size > MAX_ARGUMENTS_CHARS * 8:  # hopeless: do not walk a million items
        raise _too_large(where, size, MAX_ARGUMENTS_CHARS, at_least=True)
    if isinstance(v, Mapping):
        for key in reversed(list(v)):  # reversed: problems are found in the order of the text
            if not isinstance(key, str):
                raise InputError(
                    f"{_where(where, node)}: the key {key!r:.60} ({type(key).__name__}) is not a string; the keys "
                    "of a JSON object are strings"
                )
            size += len(key) + 3
            if not key.isascii():
                _check_text(key, where, (key, node, key, depth + 1))
            stack.append((v[key], node, key, depth + 1))
    else:
        for i in range(len(v) - 1, -1, -1):
            stack.append((v[i], node, i, depth + 1))
    return size


def check_arguments(value: Any, where: str = "the arguments", *, max_chars: int = MAX_ARGUMENTS_CHARS) -> str | None:
    """`check(value)`, fast for the usual call: returns the arguments as compact JSON text (what a trajectory records).

    The JSON text is written by the C encoder and screened (its length, a non-ASCII text that UTF-8 cannot
    encode, nesting, an integer too large); only a value the screen flags is walked by `check`, which names the
    problem and where. None: the value is fine by these rules but has no JSON text (a NaN, a set, ... passed in
    process); the tool's argument model refuses it.
    """
    if type(value) is dict and sum(len(x) for x in value.values() if type(x) is str or type(x) is list) > max_chars:
        check(value, where, max_chars=max_chars)  # too large: found at once, without writing megabytes of JSON
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        check(value, where, max_chars=max_chars)
        return None
    if len(text) > max_chars:
        raise _too_large(where, len(text), max_chars, at_least=False)
    if (not text.isascii() and not _encodable(text)) or (type(value) in (dict, list) and _flagged(value)):
        check(value, where, max_chars=max_chars)
    return text


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _flagged(value: Any) -> bool:
    """True if JSON-like `value` (dicts and lists) nests deeper than `MAX_DEPTH` or holds an integer too large."""
    level, depth = [value], 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            return True
        below = []
        for v in level:
            for x in v.values() if type(v) is dict else v:
                kind = type(x)
                if kind is dict or kind is list:
                    below.append(x)
                elif kind is int and not -MAX_INTEGER <= x <= MAX_INTEGER:
                    return True
        level = below
    return False


# ---------------------------------------------------------------------------------------------- JSON texts


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    marked = _Duplicates(out)
    for key, _ in pairs:
        if key in seen:
            marked.key = key
            break
        seen.add(key)
    return marked


def _parse_int(literal: str) -> int | _Marker:
    if len(literal) > 20:  # beyond any allowed integer; int() of a very long one is refused by Python itself
        return _BigInteger(len(literal.lstrip("-")))
    return int(literal)


def _parse_float(literal: str) -> float | _Marker:
    number = float(literal)
    return number if math.isfinite(number) else _Overflow(literal)


def loads(
    data: str | bytes,
    where: str = "the JSON text",
    *,
    max_chars: int = MAX_ARGUMENTS_CHARS,
    max_text_chars: int = MAX_TEXT_CHARS,
) -> Any:
    """The value of a JSON text, checked by `check` (with `max_chars`) and the JSON rules of the module docstring.

    `data` as bytes must be UTF-8 (a leading byte-order mark is skipped). Raises `InputError` naming `where`.
    """
    if isinstance(data, bytes | bytearray):
        if len(data) > 4 * max_text_chars:
            raise _too_large(where, len(data), max_text_chars, at_least=True)
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{where}: not UTF-8 text (byte {exc.start:,} cannot be read: {exc.reason}); send JSON encoded as UTF-8"
            ) from None
    else:
        text = data
    if len(text) > max_text_chars:
        raise _too_large(where, len(text), max_text_chars, at_least=False)
    marked: list[bool] = []  # set when a hook leaves a marker (a key twice, a constant, a number out of range)

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out = _pairs(items)
        if type(out) is not dict:
            marked.append(True)
        return out

    def constant(literal: str) -> _Marker:
        marked.append(True)
        return _Constant(literal)

    def integer(literal: str) -> int | _Marker:
        number = _parse_int(literal)
        if type(number) is not int:
            marked.append(True)
        return number

    def real(literal: str) -> float | _Marker:
        number = _parse_float(literal)
        if type(number) is not float:
            marked.append(True)
        return number

    try:
        value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant, parse_int=integer, parse_float=real)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{where}: not valid JSON ({exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno}, "
            f"character {exc.pos:,})"
        ) from None
    except RecursionError:
        raise InputError(
            f"{where}: nested too deeply to read (hundreds of levels of objects and arrays); at most {MAX_DEPTH} "
            "are allowed: send a flatter value",
            recordable=False,
        ) from None
    if not marked and _passes(value, max_chars):
        return value
    check(value, where, max_chars=max_chars, json_numbers=True)  # names the problem (or finds none)
    return value


def _passes(value: Any, max_chars: int) -> bool:
    """True if a parsed JSON value without markers passes `check(json_numbers=True)`.

    The screen of `check_arguments`: its compact JSON within `max_chars` and encodable, no nesting past
    `MAX_DEPTH`, no integer out of range. False means: let `check` walk it and say why (or pass it).
    """
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return False
    if len(text) > max_chars or (not text.isascii() and not _encodable(text)):
        return False
    return not (type(value) in (dict, list) and _flagged(value))

"""The input guard's rules (autovend.tools.guard): what JSON texts and values every door refuses, and why."""

from __future__ import annotations

import json

import pytest

from autovend.tools.guard import InputError, check, loads
from autovend.tools.trajectory import dumps

from .test_hostile_input import HUGE_INT, nested

# ----------------------------------------------------------------------------------- the rules themselves


@pytest.mark.parametrize(
    "text,message",
    [
        ('{"page": 1, "page": 2}', "the body: the key 'page' is given twice; send each key once"),
        ('{"items": [{"qty": 1, "qty": 2}]}', "items[0] in the body: the key 'qty' is given twice"),
        ('{"price_min": NaN}', "price_min in the body is NaN, which is not JSON"),
        ('{"price_min": -Infinity}', "price_min in the body is -Infinity, which is not JSON"),
        ('{"price_min": 1e999}', "price_min in the body is the number '1e999', too large for a double"),
        ('{"page": 1' + "0" * 5000 + "}", "page in the body is an integer of 5,001 digits"),
        ("[" * 100_000 + "]" * 100_000, "the body: nested too deeply to read"),
        ("[" * 33 + "]" * 33, "[0][0][0]"),
        ('{"text": "\\udead"}', "text in the body holds a lone UTF-16 surrogate (U+DEAD) at character 1"),
        ('{"page": ', "the body: not valid JSON (Expecting value at line 1 column 10, character 9)"),
        ('{"q": "a\nb"}', "the body: not valid JSON (Invalid control character at line 1 column 9, character 8)"),
    ],
)
def test_loads_refuses_what_json_readers_disagree_on(text, message):
    with pytest.raises(InputError) as caught:
        loads(text, "the body")
    assert message in str(caught.value)


def test_loads_reads_utf8_bytes_and_skips_a_byte_order_mark():
    assert loads(b'\xef\xbb\xbf{"a": "\xc3\xa9"}') == {"a": "é"}
    with pytest.raises(InputError, match="the JSON text: not UTF-8 text \\(byte 7 cannot be read"):
        loads(b'{"a": "\xff"}')
    with pytest.raises(InputError, match="the JSON text: 1,048,577 characters as JSON, over the limit of 1,048,576"):
        loads(" " * 1_048_577)


def test_check_names_keys_that_are_not_strings():
    with pytest.raises(InputError, match=r"items\[0\] in the arguments: the key 7 \(int\) is not a string"):
        check({"items": [{7: 1}]})


def test_a_trajectory_line_can_always_be_written():
    assert dumps({"n": HUGE_INT}) == '{"n":"<an integer of about 5,001 digits: not recorded>"}'
    deep = json.loads(dumps(nested(100_000)))  # json.dumps itself gives up (RecursionError)
    for _ in range(64):
        deep = deep["a"]
    assert deep == "<nested deeper than 64 levels: not recorded>"

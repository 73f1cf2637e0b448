"""Hostile arguments through the in-process door (ToolSession): refused with a message naming where, never raised.

A call that breaks a rule of autovend.tools.guard is an error result; it changes nothing and is recorded in the
trajectory like any refused call (an argument too big to record as it is is recorded as a short note), so the
trajectory holds every call, and every call that changed the state. The numbers: integers up to 2^53 - 1 =
9,007,199,254,740,991, 32 levels of nesting, 131,072 characters of JSON.
"""

from __future__ import annotations

import pytest

from autovend.env.boundary import episode_of
from autovend.env.episode import Episode
from autovend.session import ToolSession
from autovend.tools.trajectory import read_trajectory

from .conftest import fail, ok

MAX_INTEGER = 9_007_199_254_740_991
HUGE_INT = 10**5000


def nested(levels: int) -> dict:
    """Arguments whose objects nest `levels` deep in all, the arguments object itself included."""
    value: dict = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def calls(session: ToolSession) -> list[dict]:
    return [r for r in read_trajectory(session.trajectory_path) if r["kind"] == "call"]


# ----------------------------------------------------------------------------------- the bricked notebook


def test_a_lone_surrogate_in_the_notebook_is_refused_recorded_and_changes_nothing(session):
    ok(session, "write_memory", {"text": "restock drinks"})
    msg = fail(session, "write_memory", {"text": "a\ud800b"})
    assert msg.startswith(
        "write_memory: refused, nothing was done: text in the arguments holds a lone UTF-16 surrogate (U+D800) at "
        "character 2: that is no Unicode text and cannot be stored."
    )
    assert session.notebook == "restock drinks"
    last = calls(session)[-1]  # the refused call is in the trajectory, its text exactly as sent
    assert (last["tool"], last["ok"], last["arguments"]) == ("write_memory", False, {"text": "a\ud800b"})
    raw = session.trajectory_path.read_bytes()
    assert b'"text":"a\\ud800b"' in raw  # written as its JSON escape: the file is valid UTF-8
    raw.decode("utf-8")
    assert ok(session, "read_memory")["text"] == "restock drinks"


def test_a_surrogate_pair_is_text_and_is_kept(session):
    ok(session, "write_memory", {"text": "smile \U0001f600"})
    assert session.notebook == "smile \U0001f600" and ok(session, "read_memory")["chars"] == 7


def test_a_starting_notebook_must_be_unicode_text(world):
    with pytest.raises(ValueError, match=r"notebook holds a lone UTF-16 surrogate \(U\+DC00\) at character 3"):
        ToolSession(world, seed=1, notebook="ab\udc00")


def test_a_checkpoint_holding_a_surrogate_notebook_loads_with_a_question_mark(world, tmp_path):
    session = ToolSession(world, seed=1)
    episode_of(session).ctx.notebook = "x\ud800y"  # what AutoVend saved before the guard
    episode_of(session).save(tmp_path / "old.ckpt")
    restored = Episode.load(tmp_path / "old.ckpt", world)
    assert restored.notebook == "x?y"
    restored.close()
    session.close()


# ----------------------------------------------------------------------------------- numbers, nesting, size


@pytest.mark.slow
@pytest.mark.parametrize(
    "tool,args,message",
    [
        pytest.param(
            "place_order",
            {"items": [{"sku_id": "SKU0001", "qty": HUGE_INT}]},
            "items[0].qty in the arguments is an integer of about 5,001 digits",
            id="qty-5001-digits",
        ),
        pytest.param(
            "get_warehouse",
            {"page": 10**30},
            "page in the arguments is 1,000,000,000,000,000,000,000,000,000,000",
            id="page-1e30",
        ),
        pytest.param(
            "get_sales_history", {"window_days": HUGE_INT}, "window_days in the arguments is an integer", id="window"
        ),
        pytest.param(
            "get_calendar", {"days_ahead": -HUGE_INT}, "days_ahead in the arguments is an integer", id="calendar"
        ),
        pytest.param(
            "get_weather", nested(100_000), "in the arguments is nested deeper than 32 levels", id="deep-100000"
        ),
        pytest.param("place_order", {"items": [nested(5_000)]}, "items[0].a.a.a", id="deep-items"),
        pytest.param(
            "get_catalog", {"query": "x" * 10_000_000}, "the arguments: over the limit of 131,072 characters", id="10MB"
        ),
        pytest.param(
            "place_order",
            {"items": [{"sku_id": "SKU0001", "qty": 1}] * 1_000_000},
            "over the limit of 131,072",
            id="1e6-items",
        ),
    ],
)
def test_huge_numbers_deep_nesting_and_huge_texts_are_refused_and_recorded_briefly(session, tool, args, message):
    msg = fail(session, tool, args)
    assert msg.startswith(f"{tool}: refused, nothing was done: ") and message in msg and len(msg) < 400
    (record,) = calls(session)
    assert (record["tool"], record["ok"]) == (tool, False)
    assert record["arguments"].startswith("<not recorded: ")  # a note, not megabytes or a traceback
    assert len(session.trajectory_path.read_text().splitlines()[-1]) < 1_500


def test_the_integer_limit_is_2_to_the_53_minus_1(session):
    assert ok(session, "get_warehouse", {"page": MAX_INTEGER})["page"] == 9_007_199_254_740_991
    msg = fail(session, "get_warehouse", {"page": MAX_INTEGER + 1})
    assert "page in the arguments is 9,007,199,254,740,992, outside the integers JSON readers hold exactly" in msg
    assert "malformed arguments" in fail(session, "get_warehouse", {"page": -MAX_INTEGER})  # the tool's own check


def test_the_nesting_limit_is_32_levels(session):
    at = fail(session, "get_weather", nested(32))  # the guard passes it; the tool refuses the unknown parameter
    assert at.startswith("get_weather: malformed arguments, nothing was done: a is not a parameter")
    over = fail(session, "get_weather", nested(33))
    assert over.startswith("get_weather: refused, nothing was done: a.a.a.a") and "deeper than 32 levels" in over


def test_the_size_limit_is_131072_characters_of_json(session):
    fill = 131_072 - len('{"query":""}')
    assert ok(session, "get_catalog", {"query": "x" * fill})["total"] == 0
    msg = fail(session, "get_catalog", {"query": "x" * (fill + 1)})
    assert "the arguments: 131,073 characters as JSON, over the limit of 131,072" in msg
    escaped = fail(session, "get_catalog", {"query": "\x00" * 30_000})  # 30,000 characters, 180,012 as JSON
    assert "the arguments: 180,012 characters as JSON" in escaped


def test_a_nul_character_is_text(session):
    ok(session, "write_memory", {"text": "a\x00b"})
    assert session.notebook == "a\x00b" and calls(session)[-1]["arguments"] == {"text": "a\x00b"}


def test_an_unknown_tool_name_is_recorded_short(session):
    msg = fail(session, "x" * 1_000_000, {})
    assert msg.startswith("there is no tool 'xxx") and "(1,000,000 characters)" in msg and len(msg) < 500
    assert calls(session)[-1]["tool"] == "x" * 200 + "... (1,000,000 characters)"
    fail(session, "\udfff", {})
    assert calls(session)[-1]["tool"] == "\udfff"


def test_state_changing_calls_are_all_in_the_trajectory(session):
    ok(session, "write_memory", {"text": "note"})
    fail(session, "write_memory", {"text": "\ud800"})
    ok(session, "place_order", {"items": [{"sku_id": "SKU0001", "qty": 3}]})
    fail(session, "place_order", {"items": [{"sku_id": "SKU0001", "qty": 10**20}]})
    ok(session, "end_day")
    got = [(c["tool"], c["ok"]) for c in calls(session)]
    assert got == [
        ("write_memory", True),
        ("write_memory", False),
        ("place_order", True),
        ("place_order", False),
        ("end_day", True),
    ]
    assert session.counters["seq"] == 5 and session.counters["errors"] == 2

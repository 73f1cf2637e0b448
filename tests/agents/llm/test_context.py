"""Turn groups, the token estimate and eviction, on hand-made conversations with round sizes."""

from __future__ import annotations

import pytest

from autovend.agents.llm.context import (
    ASSISTANT,
    COMPACTION,
    NUDGE,
    PROMPT,
    SYSTEM,
    TOOL,
    Conversation,
    compaction_note,
    message_chars,
    turn_groups,
)


def _msg(role: str, n: int) -> dict:
    """A message whose `message_chars` is n + 8 (content of n characters plus 8 for role and framing)."""
    return {"role": role, "content": "x" * n}


def _conversation(days: int) -> Conversation:
    """system (100 tokens), then per day: [prompt 100, reply 50, tool 100] and [reply 50, tool 100].

    At 4 characters per token, a message of n content characters is (n + 8) / 4 tokens, so a
    content of 392 characters is 100 tokens and one of 192 characters is 50.
    """
    c = Conversation(tokens_per_char=0.25)
    c.append(_msg("system", 392), 1, SYSTEM)
    for d in range(1, days + 1):
        c.append(_msg("user", 392), d, PROMPT)
        c.append(_msg("assistant", 192), d, ASSISTANT)
        c.append(_msg("tool", 392), d, TOOL)
        c.append(_msg("assistant", 192), d, ASSISTANT)
        c.append(_msg("tool", 392), d, TOOL)
    return c


def test_message_chars_counts_content_and_tool_calls():
    assert message_chars({"role": "user", "content": "abcd"}) == 4 + 8
    call = {"id": "c1", "type": "function", "function": {"name": "end_day", "arguments": "{}"}}
    assert message_chars({"role": "assistant", "content": None, "tool_calls": [call]}) == (7 + 2 + 16) + 8


def test_turn_groups_join_user_messages_to_the_reply_after_them():
    kinds = [SYSTEM, PROMPT, ASSISTANT, TOOL, TOOL, ASSISTANT, TOOL, PROMPT, ASSISTANT, NUDGE, ASSISTANT, TOOL, PROMPT]
    assert turn_groups(kinds) == [(1, 5), (5, 7), (7, 9), (9, 12), (12, 13)]
    assert turn_groups([SYSTEM, COMPACTION, ASSISTANT, TOOL, PROMPT]) == [(2, 4), (4, 5)]


def test_estimate_without_usage_is_characters_over_four():
    c = _conversation(3)
    assert c.estimate() == 100 + 3 * (250 + 150) == 1300
    c.tools_chars = 400  # tool definitions count too
    assert c.estimate() == 1400


def test_estimate_with_usage_uses_the_servers_count_and_its_ratio():
    c = _conversation(1)  # 6 messages, 2400 characters
    c.tools_chars = 600
    c.record_usage(prompt_tokens=900, completion_tokens=40, sent=4)  # the request sent messages 0-3
    assert c.tokens_per_char == pytest.approx(900 / (400 + 400 + 200 + 400 + 600))  # 0.45 per character
    assert c.known_upto == 5  # the reply (message 4) is counted as completion tokens
    assert c.estimate() == 900 + 40 + round(0.45 * 400)  # plus the tool result added since: 1120


def test_compact_evicts_the_oldest_groups_until_enough_is_freed():
    c = _conversation(3)
    c.append(_msg("user", 392), 4, PROMPT)  # day 4's prompt, not answered yet
    assert c.estimate() == 1400
    assert c.compact(budget=1400, free=300, keep_last=2, day=4) is None  # not over the budget
    event = c.compact(budget=1000, free=300, keep_last=2, day=4)
    # day 1's groups: 250 tokens (not yet 300), then 150 more: 400 freed, 5 messages
    note = compaction_note(1, 1, 1)
    assert note.startswith("[Harness note] To keep this conversation within its context budget")
    assert "so far day 1; 1 removal" in note and "read_memory" in note
    assert (event.tokens_before, event.groups_removed, event.messages_removed) == (1400, 2, 5)
    assert event.days_removed == (1, 1)
    assert event.tokens_after == 1400 - 400 + round((len(note) + 8) / 4)
    assert c.messages[1] == {"role": "user", "content": note}
    assert [t["kind"] for t in c.tags][:3] == [SYSTEM, COMPACTION, PROMPT]
    assert [t["day"] for t in c.tags[2:]] == [2] * 5 + [3] * 5 + [4]
    # a second eviction replaces the note (one note, updated)
    event = c.evict(free=100, keep_last=2, day=4)
    assert event.days_removed == (2, 2) and event.messages_removed == 3
    assert sum(t["kind"] == COMPACTION for t in c.tags) == 1
    assert c.messages[1]["content"] == compaction_note(1, 2, 2)


def test_evict_keeps_the_system_message_the_pending_prompt_and_todays_prompt():
    c = _conversation(3)
    event = c.evict(free=10_000, keep_last=0, day=3)  # everything that may go, goes
    assert event.groups_removed == 6 and event.messages_removed == 14  # 15 day messages minus today's prompt
    assert [t["kind"] for t in c.tags] == [SYSTEM, COMPACTION, PROMPT]
    assert c.tags[2]["day"] == 3
    c.append(_msg("user", 392), 4, PROMPT)
    assert c.evict(free=10_000, keep_last=0, day=4) is None  # only the pending prompt is left
    c2 = _conversation(2)
    c2.evict(free=10_000, keep_last=1, day=3)
    assert [t["kind"] for t in c2.tags] == [SYSTEM, COMPACTION, ASSISTANT, TOOL]  # the newest group stays


def test_state_round_trip():
    c = _conversation(2)
    c.record_usage(prompt_tokens=700, completion_tokens=30, sent=6)
    c.evict(free=200, keep_last=1, day=3)
    d = Conversation.from_state(c.to_state())
    assert d == c and d.estimate() == c.estimate()
    d.messages[0]["content"] = "changed"
    assert c.messages[0]["content"] != "changed"  # the state is a copy

"""The conversation across days, its size in tokens, and eviction of the oldest turn groups.

The conversation is one list of OpenAI chat messages kept for the whole episode: the system prompt,
then per day the daily prompt, the model's replies and the tool results. Each message carries a
tag (day, kind) kept beside it, never sent to the server.

Size. The server's `usage` is the truth: the prompt tokens of the last request plus its completion
tokens count everything up to the last reply; messages added since are estimated with a
tokens-per-character ratio calibrated on that same request (prompt tokens / characters sent,
tool definitions included). Before any usage is known (or when a server reports none) the ratio
is 1 / `chars_per_token` (4 characters per token, typical of English and JSON text; CJK text has
fewer characters per token and would be under-counted). No tokenizer is downloaded.

Eviction (when the size passes `context_budget_tokens`). A turn group is one model reply with all
its tool results, together with the user messages just before it (a daily prompt, a harness
note). Groups go oldest first until `evict_tokens` are freed; the system message, the newest
`keep_last_groups` groups, the pending prompt (a group with no reply yet) and today's daily
prompt are never removed. A single user note after the system message says which days were
removed and that the notebook (read_memory) keeps the saved notes; it is updated on each
eviction. Every eviction returns a `CompactionEvent` for the run's log.
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass, field
from typing import Any

SYSTEM, PROMPT, NOTE, NUDGE, ASSISTANT, TOOL, COMPACTION = (
    "system",
    "prompt",  # the daily prompt of a day
    "note",  # a harness note (e.g. the day was closed by the harness)
    "nudge",  # a reminder after a reply without a tool call
    "assistant",
    "tool",
    "compaction",  # the note that earlier turns were removed
)
USER_KINDS = frozenset({PROMPT, NOTE, NUDGE})


def message_chars(message: dict[str, Any]) -> int:
    """Characters of a message that reach the model (content, tool names and arguments)."""
    content = message.get("content")
    if content is None:
        n = 0
    elif isinstance(content, str):
        n = len(content)
    else:  # a list of content parts
        n = len(json.dumps(content, ensure_ascii=False))
    for call in message.get("tool_calls") or ():
        fn = call.get("function", {})
        n += len(fn.get("name") or "") + len(fn.get("arguments") or "") + 16
    return n + 8  # role and framing


def turn_groups(kinds: list[str]) -> list[tuple[int, int]]:
    """Spans [start, end) of the turn groups of a conversation, given each message's kind.

    The system message and the compaction note are outside every group. A group opens at a user
    message that follows a reply (or at a reply that follows another group's reply) and holds the
    reply's tool results; the last span may have no reply yet (the pending prompt).
    """
    spans: list[tuple[int, int]] = []
    start: int | None = None
    has_reply = False
    for i, kind in enumerate(kinds):
        if kind in (SYSTEM, COMPACTION):
            continue
        if kind in USER_KINDS:
            if start is None:
                start = i
            elif has_reply:
                spans.append((start, i))
                start, has_reply = i, False
        elif kind == ASSISTANT:
            if start is None:
                start = i
            elif has_reply:
                spans.append((start, i))
                start = i
            has_reply = True
        elif start is None:  # a tool result without its reply (cannot happen in a well-formed log)
            start = i
    if start is not None:
        spans.append((start, len(kinds)))
    return spans


@dataclass(frozen=True)
class CompactionEvent:
    """One eviction: the day, estimated tokens before and after, what was removed."""

    day: int
    tokens_before: int
    tokens_after: int
    groups_removed: int
    messages_removed: int
    days_removed: tuple[int, int]  # first and last day with a removed message

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        d = asdict(self)
        d["days_removed"] = list(self.days_removed)
        return d


def compaction_note(first_day: int, last_day: int, times: int) -> str:
    """The text of the note that replaces evicted turns."""
    span = f"day {first_day}" if first_day == last_day else f"days {first_day} to {last_day}"
    return (
        f"[Harness note] To keep this conversation within its context budget, the oldest turns were removed "
        f"(so far {span}; {times} removal{'s' if times != 1 else ''}). The operating records are intact: query "
        "them with the tools. Your notebook is kept in full: read it with read_memory."
    )


@dataclass
class Conversation:
    """The messages with their tags, the token estimate and the eviction state (see the module docstring)."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    tags: list[dict[str, Any]] = field(default_factory=list)  # {"day": int, "kind": str} per message
    tools_chars: int = 0
    tokens_per_char: float = 0.25
    known_tokens: int | None = None  # server-counted size of messages[:known_upto]
    known_upto: int = 0
    removed_days: tuple[int, int] | None = None
    compactions: int = 0

    # ------------------------------------------------------------------ building

    def append(self, message: dict[str, Any], day: int, kind: str) -> None:
        """Add a message of `kind` on `day`."""
        self.messages.append(message)
        self.tags.append({"day": int(day), "kind": kind})

    def kinds(self) -> list[str]:
        """The kind of every message."""
        return [t["kind"] for t in self.tags]

    # ------------------------------------------------------------------ size

    def chars(self, start: int = 0, end: int | None = None) -> int:
        """Characters of messages[start:end]."""
        return sum(message_chars(m) for m in self.messages[start:end])

    def record_usage(self, prompt_tokens: int, completion_tokens: int, sent: int) -> None:
        """Calibrate on a request that sent messages[:sent] and got the reply now at messages[sent]."""
        if prompt_tokens <= 0:
            return
        sent_chars = self.chars(0, sent) + self.tools_chars
        if sent_chars > 0:
            self.tokens_per_char = prompt_tokens / sent_chars
        self.known_tokens = prompt_tokens + max(completion_tokens, 0)
        self.known_upto = min(sent + 1, len(self.messages))

    def estimate(self) -> int:
        """Estimated tokens of the whole conversation (with the tool definitions) as the next request."""
        if self.known_tokens is not None and self.known_upto <= len(self.messages):
            return self.known_tokens + round(self.tokens_per_char * self.chars(self.known_upto))
        return round(self.tokens_per_char * (self.chars() + self.tools_chars))

    # ------------------------------------------------------------------ eviction

    def compact(self, budget: int, free: int, keep_last: int, day: int) -> CompactionEvent | None:
        """Evict the oldest turn groups if the estimate passes `budget` (see the module docstring)."""
        before = self.estimate()
        if before <= budget:
            return None
        return self.evict(free, keep_last, day, before)

    def evict(self, free: int, keep_last: int, day: int, before: int | None = None) -> CompactionEvent | None:
        """Remove the oldest groups until `free` tokens are freed (None if nothing can be removed)."""
        before = self.estimate() if before is None else before
        kinds = self.kinds()
        groups = turn_groups(kinds)
        if groups and not any(k == ASSISTANT for k in kinds[groups[-1][0] : groups[-1][1]]):
            groups = groups[:-1]  # the pending prompt stays
        evictable = groups[: max(len(groups) - keep_last, 0)]
        removed: set[int] = set()
        freed = 0.0
        for start, end in evictable:
            if freed >= free:
                break
            for i in range(start, end):
                tag = self.tags[i]
                if tag["kind"] == PROMPT and tag["day"] == day:
                    continue  # today's daily prompt stays
                removed.add(i)
                freed += self.tokens_per_char * message_chars(self.messages[i])
        if not removed:
            return None
        days = [self.tags[i]["day"] for i in removed]
        first = min(days) if self.removed_days is None else min(self.removed_days[0], min(days))
        last = max(days) if self.removed_days is None else max(self.removed_days[1], max(days))
        self.removed_days = (first, last)
        self.compactions += 1
        groups_removed = sum(1 for s, e in evictable if any(i in removed for i in range(s, e)))
        old_notes = {i for i, t in enumerate(self.tags) if t["kind"] == COMPACTION}
        keep = [i for i in range(len(self.messages)) if i not in removed and i not in old_notes]
        note = {"role": "user", "content": compaction_note(first, last, self.compactions)}
        if self.known_tokens is not None:  # keep the server's count, minus what left, plus the new note
            gone = [i for i in removed | old_notes if i < self.known_upto]
            left = sum(message_chars(self.messages[i]) for i in gone) - message_chars(note)
            self.known_tokens = max(self.known_tokens - round(self.tokens_per_char * left), 0)
            self.known_upto = self.known_upto - len(gone) + 1
        system = [i for i in keep if self.tags[i]["kind"] == SYSTEM]
        rest = [i for i in keep if self.tags[i]["kind"] != SYSTEM]
        self.messages = [self.messages[i] for i in system] + [note] + [self.messages[i] for i in rest]
        self.tags = [self.tags[i] for i in system] + [{"day": day, "kind": COMPACTION}] + [self.tags[i] for i in rest]
        after = self.estimate()
        return CompactionEvent(
            day=day,
            tokens_before=int(before),
            tokens_after=int(after),
            groups_removed=groups_removed,
            messages_removed=len(removed),
            days_removed=(min(days), max(days)),
        )

    # ------------------------------------------------------------------ state

    def to_state(self) -> dict[str, Any]:
        """JSON-ready state (messages, tags and the estimator's calibration)."""
        return {
            "messages": copy.deepcopy(self.messages),
            "tags": copy.deepcopy(self.tags),
            "tools_chars": self.tools_chars,
            "tokens_per_char": self.tokens_per_char,
            "known_tokens": self.known_tokens,
            "known_upto": self.known_upto,
            "removed_days": None if self.removed_days is None else list(self.removed_days),
            "compactions": self.compactions,
        }

    @classmethod
    def from_state(cls, d: dict[str, Any]) -> Conversation:
        """The conversation saved by `to_state`."""
        removed = d.get("removed_days")
        return cls(
            messages=copy.deepcopy(list(d["messages"])),
            tags=copy.deepcopy(list(d["tags"])),
            tools_chars=int(d.get("tools_chars", 0)),
            tokens_per_char=float(d.get("tokens_per_char", 0.25)),
            known_tokens=d.get("known_tokens"),
            known_upto=int(d.get("known_upto", 0)),
            removed_days=None if removed is None else (int(removed[0]), int(removed[1])),
            compactions=int(d.get("compactions", 0)),
        )

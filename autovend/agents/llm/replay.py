"""What an agent saw and did on one day of a run, as text (`autovend replay RUN_DIR --day N`).

For LLM runs the source is the transcript (`llm.jsonl`): the daily prompt, each model turn (its
text, tool calls and their results, token usage), compactions, retries and who ended the day. For
other agents (e.g. the baseline) it is the tool trajectory (`trajectory.jsonl`): the day's calls and
results. Pure functions over the loaded records; the CLI only reads files and prints.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from autovend.agents.llm.transcript import LLM_LOG_FILE, read_transcript
from autovend.errors import RunFolderError

TRAJECTORY_FILE = "trajectory.jsonl"


def _cut(text: str, max_chars: int) -> str:
    if max_chars <= 0 or len(text) <= max_chars:
        return text
    return text[:max_chars] + f" … [{len(text) - max_chars:,} more characters; --max-chars 0 shows all]"


def _args(raw: Any) -> str:
    if isinstance(raw, str):
        try:
            return json.dumps(json.loads(raw), ensure_ascii=False)
        except json.JSONDecodeError:
            return raw
    return json.dumps(raw, ensure_ascii=False)


def _usage(u: dict[str, Any]) -> str:
    return (
        f"{u.get('input_tokens', 0):,} in ({u.get('cached_tokens', 0):,} cached) / "
        f"{u.get('output_tokens', 0):,} out tokens"
    )


def days_in(records: Iterable[dict[str, Any]]) -> list[int]:
    """The days that have records (day 0, the start record, excluded)."""
    return sorted({int(r.get("day", 0)) for r in records if int(r.get("day", 0) or 0) > 0})


def transcript_day(records: list[dict[str, Any]], day: int, max_chars: int = 2000) -> list[str]:
    """Lines describing `day` from transcript records (see the module docstring)."""
    rows = [r for r in records if r.get("day") == day and r.get("kind") != "start"]
    if not rows:
        known = days_in(records)
        span = f"days {known[0]}-{known[-1]}" if known else "no day"
        raise RunFolderError(f"the transcript has no record of day {day} (it covers {span}); pick another --day")
    start = next((r for r in records if r.get("kind") == "start"), {})
    out = [f"Day {day} — {start.get('agent', 'LLM agent')} ({start.get('model', '?')})"]
    names: dict[str, str] = {}
    for r in rows:
        kind = r.get("kind")
        if kind == "message":
            msg = r.get("message", {})
            tag = r.get("tag")
            if msg.get("role") == "tool":
                name = r.get("tool") or names.get(msg.get("tool_call_id", ""), "?")
                status = "ok" if r.get("ok") else "error"
                out.append(f"  ← {name} {status}: {_cut(str(msg.get('content', '')), max_chars)}")
            else:
                titles = {"prompt": "daily prompt", "nudge": "harness nudge", "note": "harness note"}
                title = titles.get(tag, tag) if isinstance(tag, str) else tag
                out.append(f"── {title} ──")
                out.append(_cut(str(msg.get("content", "")), max_chars))
        elif kind == "response":
            msg = r.get("message", {})
            context = r.get("context_tokens", 0)
            out.append(
                f"── model turn {r.get('turn')} · {_usage(r.get('usage', {}))} · context ≈{context:,} tokens · "
                f"{r.get('latency_ms', 0):,.0f} ms ──"
            )
            if r.get("reasoning"):
                out.append(f"  (reasoning) {_cut(str(r['reasoning']), max_chars)}")
            if msg.get("content"):
                out.append(f"  {_cut(str(msg['content']), max_chars)}")
            for tc in msg.get("tool_calls") or ():
                fn = tc.get("function", {})
                names[tc.get("id", "")] = fn.get("name", "?")
                out.append(f"  → {fn.get('name')} {_cut(_args(fn.get('arguments')), max_chars)}")
        elif kind == "compaction":
            first, last = r.get("days_removed", [None, None])
            out.append(
                f"── compaction{' (emergency)' if r.get('emergency') else ''}: ≈{r.get('tokens_before', 0):,} → "
                f"≈{r.get('tokens_after', 0):,} tokens, {r.get('groups_removed')} turn groups of days {first}-{last} "
                "removed ──"
            )
        elif kind == "retry":
            out.append(f"── retry after attempt {r.get('attempt')}: {r.get('error')} (waited {r.get('wait_s')} s) ──")
        elif kind == "error":
            out.append(f"── the run stopped here: {r.get('message')} ──")
        elif kind == "resume":
            out.append(f"── resumed: {r.get('discarded_records')} records of an unfinished day were set aside ──")
        elif kind == "day_closed":
            who = "the agent (end_day)" if r.get("by") == "agent" else f"the harness: {r.get('reason')}"
            out.append(
                f"── day ended by {who} · {r.get('turns')} turns, {r.get('tool_calls')} tool calls "
                f"({r.get('malformed_tool_calls', 0)} malformed) · {_usage(r.get('usage', {}))} ──"
            )
    return out


def trajectory_day(calls: list[dict[str, Any]], day: int, max_chars: int = 2000) -> list[str]:
    """Lines describing `day` from trajectory records (tool calls only)."""
    rows = [c for c in calls if c.get("kind") == "call" and c.get("day") == day]
    if not rows:
        known = days_in(c for c in calls if c.get("kind") == "call")
        span = f"days {known[0]}-{known[-1]}" if known else "no day"
        raise RunFolderError(f"the trajectory has no call on day {day} (it covers {span}); pick another --day")
    out = [f"Day {day} — {len(rows)} tool calls (no LLM transcript in this run: the trajectory's calls)"]
    for c in rows:
        out.append(f"  → {c.get('tool')} {_cut(_args(c.get('arguments')), max_chars)}")
        result = c.get("result") if c.get("ok") else c.get("error")
        status = "ok" if c.get("ok") else "error"
        text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
        out.append(f"  ← {status}: {_cut(text, max_chars)}")
    return out


def replay_lines(run_dir: str | Path, day: int, max_chars: int = 2000) -> list[str]:
    """The replay of `day` of the run in `run_dir` (transcript if there is one, else the trajectory)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunFolderError(f"{run_dir} is not a folder; give the run folder written by `autovend run`")
    llm = run_dir / LLM_LOG_FILE
    if llm.exists():
        return transcript_day(read_transcript(llm), day, max_chars)
    traj = run_dir / TRAJECTORY_FILE
    if not traj.exists():
        raise RunFolderError(f"{run_dir} has neither {LLM_LOG_FILE} nor {TRAJECTORY_FILE}; is it a run folder?")
    calls = []
    with traj.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                try:
                    calls.append(json.loads(line))
                except json.JSONDecodeError:
                    break  # a torn last line of a killed run
    return trajectory_day(calls, day, max_chars)

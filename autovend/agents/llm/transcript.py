"""The LLM transcript of a run: `llm.jsonl` beside the tool trajectory, one JSON record per line.

Records (every one has `kind` and `day`):

- `start`: model, base URL, harness config, price entry, the system prompt and the tool definitions
  as sent to the model (written once, on day 1).
- `message`: a message added to the conversation that the model will read: the daily prompt,
  a harness note, a nudge, a tool result (`message` is the OpenAI message dict; `tool` and `ok`
  for tool results, `malformed` when the call never reached a tool).
- `response`: a model reply: `turn` (1-based within the day), the assistant `message` (content
  and tool calls as sent back), `reasoning` text if the server returned it, `finish_reason`,
  `usage` (this request, see `client.Usage`), `context_tokens` (the harness's estimate before the
  request), `attempts` and `latency_ms`.
- `retry`: a failed try (attempt, error, wait_s). `compaction`: an eviction (`CompactionEvent`).
- `day_closed`: who ended the day (`by`: agent or harness), `reason`, turns and tool calls used,
  that day's usage. `error`: the run stopped on this day (message). `resume`: a resumed run
  dropped the records of an unfinished day (`discarded_records`, `discarded_usage`).

Lines are flushed as written, so a killed run keeps everything up to the kill; on resume the
file is cut back to the offset saved with the last completed day.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from autovend.errors import RunFolderError
from autovend.tools.trajectory import dumps

LLM_LOG_FILE = "llm.jsonl"


class Transcript:
    """Appends records to an `llm.jsonl` file (see the module docstring)."""

    def __init__(self, path: str | Path, truncate_to: int | None = None, fresh: bool = False) -> None:
        """Open `path` for appending: emptied first if `fresh`, else cut back to `truncate_to` bytes if given.

        The records cut off are kept in `discarded` (a resumed run accounts for their tokens).
        """
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.discarded: list[dict[str, Any]] = []
        if not fresh and truncate_to is not None and self.path.exists() and self.path.stat().st_size > truncate_to:
            self.discarded = read_transcript(self.path, start=truncate_to)
            with self.path.open("r+b") as fh:
                fh.truncate(truncate_to)
        # backslashreplace: a lone surrogate in a model's text (invalid in UTF-8) is written as its JSON escape
        self._fh: IO[str] | None = self.path.open("w" if fresh else "a", encoding="utf-8", errors="backslashreplace")

    def write(self, kind: str, day: int, **fields: Any) -> None:
        """Append one record."""
        if self._fh is None:
            raise ValueError(f"the transcript {self.path} is closed")
        self._fh.write(dumps({"kind": kind, "day": day, **fields}) + "\n")
        self._fh.flush()

    @property
    def offset(self) -> int:
        """Bytes written so far (where a resumed run cuts the file back to)."""
        if self._fh is None:
            return self.path.stat().st_size if self.path.exists() else 0
        return self._fh.tell()

    def close(self) -> None:
        """Close the file."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def read_transcript(path: str | Path, start: int = 0) -> list[dict[str, Any]]:
    """The records of a transcript (from byte offset `start`); a torn last line is skipped."""
    path = Path(path)
    if not path.exists():
        raise RunFolderError(f"{path} does not exist; only LLM runs write {LLM_LOG_FILE}")
    with path.open("rb") as fh:
        fh.seek(start)
        lines = fh.read().decode("utf-8", errors="replace").splitlines()
    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            if n == len(lines):  # killed while writing the last line
                break
            raise RunFolderError(f"{path}: line {n} is not valid JSON ({exc}); the transcript is damaged") from exc
    return out

"""`ToolResult`: the outcome of one tool call, as every transport (in process, MCP) returns it."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ValidationError

from autovend.tools.trajectory import dumps

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolResult:
    """The outcome of one tool call: `ok`, the JSON-ready `content`, and the `error` message when not ok.

    A batch with rejected items is still `ok` (the rejections are in the content); `ok` is False
    only when the call as a whole was refused. `text` is `content` as compact JSON (what an agent
    reads); `data` is the same result as the tool's typed model (`model`: `ToolDef.result`, e.g.
    `GetWarehouseResult`), None for an error result. It is parsed from `text` when first read (most
    callers never read it); a text its model does not accept, a bug in a tool, gives None and a
    logged error. `code` says why a call was refused (`autovend.tools.errors.REFUSAL_CODES`; None
    when it was not); it is not part of the content, so the in-process texts stay as they were.
    """

    ok: bool
    content: dict[str, Any]
    error: str | None = None
    text: str = field(default="", repr=False)
    model: type[BaseModel] | None = field(default=None, repr=False, compare=False)
    code: str | None = field(default=None, compare=False)  # a refused call's `autovend.tools.errors` code

    @cached_property
    def data(self) -> BaseModel | None:
        """The result as its tool's typed model (see the class docstring)."""
        if not self.ok or self.model is None:
            return None
        try:
            return self.model.model_validate_json(self.text, strict=True)
        except ValidationError:
            log.exception("the result does not match %s; the agent still gets its text", self.model.__name__)
            return None

    def to_json(self) -> str:
        """The content as compact JSON text."""
        return self.text or dumps(self.content)

    def structured_content(self) -> dict[str, Any] | None:
        """The JSON object of `text` (an MCP result's structured content); None for an error result.

        Parsed once per result (a kept answer is served many times); treat it as read-only.
        """
        return self._structured if self.ok else None

    @cached_property
    def _structured(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.to_json())
        return parsed

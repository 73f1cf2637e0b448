"""The baseline's edge to the tools: successful results, every page or row of a listing, batched mutations.

The sizes are the tools' own limits (largest page, most rows of a query, most items of a batch), so
the baseline makes as few calls as the tools allow. A refused call is a bug in the baseline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from autovend.tools.schemas import MAX_BATCH_ITEMS, MAX_PAGE_SIZE
from autovend.tools.sql import MAX_ROWS

if TYPE_CHECKING:
    from autovend.session import ToolResult, ToolSession


def ok(res: ToolResult, what: str) -> dict[str, Any]:
    """The content of a successful call; a refused call is a bug in the baseline."""
    if not res.ok:
        raise RuntimeError(f"baseline: {what} was refused: {res.error}")
    return res.content


def all_rows(session: ToolSession, tool: str, args: dict[str, Any]) -> list[dict[str, Any]]:
    """Every row of a paginated tool, as dicts keyed by column, fetched in pages of `MAX_PAGE_SIZE` rows."""
    rows: list[dict[str, Any]] = []
    page = 1
    while True:
        out = ok(session.call(tool, {**args, "page": page, "page_size": MAX_PAGE_SIZE}), tool)
        cols = out["columns"]
        rows.extend(dict(zip(cols, r, strict=True)) for r in out["rows"])
        if page >= int(out["pages"]):
            return rows
        page += 1


def sql_rows(session: ToolSession, sql: str) -> list[list[Any]]:
    """All rows of a SELECT, fetched `MAX_ROWS` at a time with LIMIT/OFFSET (query_sql returns at most that many)."""
    rows: list[list[Any]] = []
    offset = 0
    while True:
        out = ok(session.call("query_sql", {"sql": f"{sql} LIMIT {MAX_ROWS} OFFSET {offset}"}), "query_sql")
        rows.extend(out["rows"])
        if len(out["rows"]) < MAX_ROWS:
            return rows
        offset += MAX_ROWS


def batched(session: ToolSession, tool: str, items: list[dict[str, Any]]) -> list[ToolResult]:
    """Send `items` in batches of at most `MAX_BATCH_ITEMS`; a refused batch is a bug in the baseline."""
    out = []
    for i in range(0, len(items), MAX_BATCH_ITEMS):
        res = session.call(tool, {"items": items[i : i + MAX_BATCH_ITEMS]})
        ok(res, tool)
        out.append(res)
    return out

"""Building blocks of the console's pages: the page shell with its inlined style and script, tables, key figures.

Pages are server-rendered strings; everything from a run or a tool is escaped on the way in (`esc`). The style
and the scripts ship with the package (`autovend/console/assets`) and are inlined into each page, so the console
needs no network, no CDN and no build step.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources
from typing import Any

from starlette.responses import HTMLResponse, JSONResponse

from autovend.marks import MISSING, number_cell

PALETTE = ("#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#d62728")


def esc(value: object) -> str:
    """Text escaped for HTML (quotes too, so it is safe in attributes)."""
    return html.escape(str(value), quote=True)


@cache
def asset(name: str) -> str:
    """The text of a shipped asset (console.css, replay.js, play.js)."""
    return resources.files("autovend.console").joinpath("assets", name).read_text(encoding="utf-8")


def script_json(obj: Any) -> str:
    """JSON safe inside a <script type="application/json"> element."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")


class Html(HTMLResponse):
    """An HTML response that can always be sent: a lone surrogate (in an old run's records) shows as its escape."""

    def render(self, content: Any) -> bytes:
        """The page as UTF-8."""
        if isinstance(content, str):
            return content.encode("utf-8", "backslashreplace")
        return bytes(super().render(content))


class Json(JSONResponse):
    """A JSON response that can always be sent: a lone surrogate is written as its JSON escape."""

    def render(self, content: Any) -> bytes:
        """The content as compact UTF-8 JSON."""
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))
        return text.encode("utf-8", "backslashreplace")


def page(title: str, header: str, body: str, script: str | None = None, extra_head: str = "") -> str:
    """A whole page: title, sticky header, main body, the inlined style and (optionally) one shipped script."""
    tail = f"<script>{asset(script)}</script>" if script else ""
    return (
        "<!doctype html>\n<html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{asset('console.css')}</style>{extra_head}</head>"
        f"<body><header>{header}</header><main>{body}</main>{tail}</body></html>\n"
    )


def money(x: float | None) -> str:
    """An amount with thousands separators and two decimals (`MISSING` for nothing); the caller names the currency."""
    return number_cell(x)


def cell(value: object) -> str:
    """One table cell: numbers right-aligned (floats with two decimals), text escaped (may wrap after a /), None "–"."""
    if value is None:
        return f"<td>{MISSING}</td>"
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, int):
        return f'<td class="num">{value:,}</td>'
    if isinstance(value, float):
        return f'<td class="num">{money(value)}</td>'
    return f"<td>{esc(value).replace('/', '/<wbr>')}</td>"


def header(name: object) -> str:
    """A column name for a table head, allowed to wrap after its underscores (units_on_shelf: units_ on_ shelf)."""
    return esc(name).replace("_", "_<wbr>")


def table(columns: Sequence[str], rows: Iterable[Sequence[object]], cls: str = "") -> str:
    """A table with a header row; cells through `cell`."""
    head = "".join(f"<th>{header(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(cell(v) for v in row) + "</tr>" for row in rows)
    klass = f' class="{esc(cls)}"' if cls else ""
    return f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def kpis(items: Iterable[tuple[str, str, str]]) -> str:
    """A row of key figures: (css name, label, value)."""
    parts = [
        f'<div class="kpi" data-kpi="{esc(name)}"><span class="label">{esc(label)}</span>'
        f'<span class="value">{esc(value)}</span></div>'
        for name, label, value in items
    ]
    return '<div class="kpis">' + "".join(parts) + "</div>"


def pretty(obj: Any, max_chars: int = 4000) -> str:
    """JSON indented for reading, cut at `max_chars` with a note of what was left out."""
    text = json.dumps(obj, ensure_ascii=False, indent=1, default=str)
    if max_chars and len(text) > max_chars:
        text = text[:max_chars] + f"\n… [{len(text) - max_chars:,} more characters]"
    return text

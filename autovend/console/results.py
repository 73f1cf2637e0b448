"""Tool calls and their results as a person reads them: tables, not JSON (the play page and the replay).

A result is the JSON object an agent reads; `result_html` lays it out:

- a refused call (`{"error": ...}`): the message, in red;
- a batch of the six mutation tools (place_order, restock, ...): the rejected items first, one red row each
  with its code and reason, then the accepted items, then the rest of the result (total cost, cash, visits);
- any other object: its plain values as a two-column table, each table (`{"columns", "rows"}`) and each list
  of objects as a table under its name, each nested object under its name (the next day's report in
  end_day's result folded away: the page shows it anyway).

Tables are cut at `MAX_ROWS` rows (`LIST_ROWS` in a list of calls, but for rejected items) with a note of how
many are left out. The JSON as the agent reads it is one click away under the last call's result (cut at
`JSON_CHARS`), not in lists of calls (it would make a day's page three times as heavy; the JSON APIs give
results whole). `status` says whether a call did all it was asked ("1 of 3 items rejected"): a call whose
batch rejected an item is not "ok", even though the tool accepted the call.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from autovend.console.html import esc, header, pretty
from autovend.marks import MISSING

MAX_ROWS = 100  # rows of one table shown in the page (rejected items: always up to this many)
LIST_ROWS = 20  # ... in a list of calls (a day's calls), but for rejected items
JSON_CHARS = 20_000  # the JSON under a result is cut here (the last call's result; none in lists of calls)
FOLDED = {"observation": "the next day's report (the page shows it)"}  # nested objects shown folded
SHORT = 24  # text cells up to this long without a space stay on one line (ids, dates, codes)
BATCH_KEYS = ("action", "accepted", "rejected", "n_accepted", "n_rejected")


def number(value: float | int) -> str:
    """A number as shown: thousands separated; whole fen as two decimals (3.0 -> 3.00), finer values as given."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return str(value)
    if abs(value * 100 - round(value * 100)) < 1e-6:
        return f"{value:,.2f}"
    return f"{value:,}"


def cell(value: Any) -> str:
    """One table cell: numbers right-aligned, None as "–", lists joined, objects as "key value" pairs."""
    if value is None:
        return f"<td>{MISSING}</td>"
    if isinstance(value, bool):
        return f"<td>{'yes' if value else 'no'}</td>"
    if isinstance(value, (int, float)):
        return f'<td class="num">{number(value)}</td>'
    if isinstance(value, Mapping):
        return f"<td>{esc(' · '.join(f'{k} {v}' for k, v in value.items()))}</td>"
    if isinstance(value, list):
        return f"<td>{esc(', '.join(str(v) for v in value) or 'none')}</td>"
    text = str(value)
    if len(text) <= SHORT and " " not in text:  # ids, dates, codes: on one line
        return f'<td class="nw">{esc(text)}</td>'
    return f"<td>{esc(text).replace('/', '/<wbr>')}</td>"


def grid(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], cls: str = "", row_cls: str = "", max_rows: int = MAX_ROWS
) -> str:
    """A table of `rows` under `columns` (cut at `max_rows` rows, with a note), in a horizontally scrollable box."""
    head = "".join(f"<th>{header(c)}</th>" for c in columns)
    tr = f'<tr class="{esc(row_cls)}">' if row_cls else "<tr>"
    body = "".join(tr + "".join(cell(v) for v in row) + "</tr>" for row in rows[:max_rows])
    klass = f' class="{esc(cls)}"' if cls else ""
    more = len(rows) - max_rows
    note = f'<p class="facts">… and {more:,} more rows, not shown</p>' if more > 0 else ""
    empty = '<p class="facts">no rows</p>' if not rows else ""
    table = f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
    return f'<div class="wide">{table}</div>{note}{empty}'


def _is_table(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("columns"), list) and isinstance(value.get("rows"), list)


def _is_records(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(v, Mapping) for v in value)


def records(items: Sequence[Mapping[str, Any]], max_rows: int = MAX_ROWS) -> str:
    """A list of objects as a table of their keys (in order of first appearance)."""
    columns = list(dict.fromkeys(k for item in items for k in item))
    return grid(columns, [[item.get(c) for c in columns] for item in items], max_rows=max_rows)


def fields(obj: Mapping[str, Any]) -> str:
    """The plain (not nested) values of an object as a two-column table; "" when it has none."""
    plain = [(k, v) for k, v in obj.items() if not isinstance(v, Mapping) and not _is_records(v)]
    if not plain:
        return ""
    rows = "".join(f"<tr><th>{esc(k)}</th>{cell(v)}</tr>" for k, v in plain)
    return f'<table class="fields"><tbody>{rows}</tbody></table>'


def object_html(obj: Mapping[str, Any], max_rows: int = MAX_ROWS) -> str:
    """Any result object: plain values, its nested parts under their names, then its own rows (a table result)."""
    own = ""
    if _is_table(obj):
        own = grid(obj["columns"], obj["rows"], max_rows=max_rows)
        obj = {k: v for k, v in obj.items() if k not in ("columns", "rows")}
    parts = [fields(obj)]
    for key, value in obj.items():
        title = f'<h4 class="key">{esc(key)}</h4>'
        if key in FOLDED and isinstance(value, Mapping):
            parts.append(
                f'<details class="folded"><summary>{esc(key)}: {esc(FOLDED[key])}</summary>'
                f"{object_html(value, max_rows)}</details>"
            )
        elif _is_table(value):
            parts.append(title + object_html(value, max_rows))
        elif _is_records(value):
            parts.append(title + records(value, max_rows))
        elif isinstance(value, Mapping):
            parts.append(f'<div class="nested">{title}{object_html(value, max_rows)}</div>')
    return "".join(parts) + own


def _item_rows(entries: Sequence[Mapping[str, Any]], tail: Sequence[str]) -> tuple[list[str], list[list[Any]]]:
    """Batch entries as rows: "row" (index + 1), the entry's own values, the item's other fields, then `tail`."""
    own = list(dict.fromkeys(k for e in entries for k in e if k not in ("index", "item", *tail)))
    items: list[Mapping[str, Any]] = [e["item"] if isinstance(e.get("item"), Mapping) else {} for e in entries]
    extra = list(dict.fromkeys(k for item in items for k in item if k not in own))
    columns = ["row", *own, *extra, *tail]
    rows = []
    for e, item in zip(entries, items, strict=True):
        index = e.get("index")
        row = [index + 1 if isinstance(index, int) else index]
        row += [e.get(k) for k in own] + [item.get(k) for k in extra] + [e.get(k) for k in tail]
        rows.append(row)
    return columns, rows


def is_batch(result: Any) -> bool:
    """A result of one of the six mutation tools (accepted and rejected items)."""
    return isinstance(result, Mapping) and all(k in result for k in BATCH_KEYS)


def batch_html(result: Mapping[str, Any], max_rows: int = MAX_ROWS) -> str:
    """A batch result: the rejected items in red with their reasons (up to MAX_ROWS), the accepted ones, the rest."""
    parts = []
    rejected = result.get("rejected") or []
    accepted = result.get("accepted") or []
    if rejected:
        items = [{**{k: v for k, v in r.items() if k != "message"}, "reason": r.get("message")} for r in rejected]
        columns, rows = _item_rows(items, ["code", "reason"])
        parts.append(f'<h4 class="key error">rejected ({len(rejected)}): nothing was done for these</h4>')
        parts.append(grid(columns, rows, cls="rejected", row_cls="rejected"))
    if accepted:
        columns, rows = _item_rows(accepted, [])
        parts.append(f'<h4 class="key ok">accepted ({len(accepted)})</h4>')
        parts.append(grid(columns, rows, cls="accepted", max_rows=max_rows))
    rest = {k: v for k, v in result.items() if k not in BATCH_KEYS}
    parts.append(object_html(rest, max_rows))
    return "".join(parts)


def status(ok: bool, result: Any) -> tuple[str, str]:
    """(text, css class) of a call's outcome: "ok", "refused", "1 of 3 items rejected", "all 2 items rejected"."""
    if not ok:
        return "refused", "error"
    if is_batch(result):
        n_rej, n_acc = int(result.get("n_rejected") or 0), int(result.get("n_accepted") or 0)
        if n_rej and not n_acc:
            return f"all {n_rej} item{'s' if n_rej > 1 else ''} rejected", "error"
        if n_rej:
            return f"{n_rej} of {n_rej + n_acc} items rejected", "error"
    return "ok", "ok"


def status_html(ok: bool, result: Any) -> str:
    """The outcome as a coloured span (`status`)."""
    text, css = status(ok, result)
    return f'<span class="{css}">{esc(text)}</span>'


def result_html(
    ok: bool, result: Any, error: str | None = None, max_json_chars: int = JSON_CHARS, max_rows: int = MAX_ROWS
) -> str:
    """A call's result as tables (see the module docstring), with at most `max_json_chars` of its JSON folded below."""
    if not ok:
        return f'<p class="error refusal">{esc(error or "refused")}</p>'
    if is_batch(result):
        body = batch_html(result, max_rows)
    elif isinstance(result, Mapping):
        body = object_html(result, max_rows)
    else:
        body = f"<pre>{esc(pretty(result, max_json_chars))}</pre>"
    raw = ""
    if max_json_chars:
        raw = f'<details class="json"><summary>JSON</summary><pre>{esc(pretty(result, max_json_chars))}</pre></details>'
    return f'<div class="result-body">{body}{raw}</div>'


def call_html(
    seq: object,
    tool: str,
    arguments: Any,
    ok: bool,
    result: Any,
    error: str | None,
    *,
    opened: bool = False,
    max_rows: int = LIST_ROWS,
) -> str:
    """One call, folded: "#seq tool arguments — status"; unfolded, its result as tables (without the JSON)."""
    args = json.dumps(arguments, ensure_ascii=False, default=str)
    if len(args) > 200:
        args = args[:200] + "…"
    text, css = status(ok, result)
    return (
        f'<details class="call" data-status="{esc(css)}"{" open" if opened else ""}><summary>#{esc(seq)} '
        f"<b>{esc(tool)}</b> <code>{esc(args)}</code> — "
        f'<span class="{css}">{esc(text)}</span></summary>'
        f"{result_html(ok, result, error, 0, max_rows)}</details>"
    )

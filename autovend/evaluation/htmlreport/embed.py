"""Bokeh charts in a self-contained, byte-stable HTML page.

- `bokeh_js()`: BokehJS (core bundle only, ~1.3 MB) as inline <script> tags: the page loads nothing.
- `chart_item(model, target)`: the chart's JSON for `Bokeh.embed.embed_item`, with stable model ids.
  Bokeh numbers models from a process-wide counter (p1001, p1002, ...), so the same chart built after
  another would get other ids; here every id is renamed `<target>-<n>` in order of first appearance,
  so the JSON depends only on the chart.
- `script_json(obj)`: JSON safe inside a <script> element (no "<", no NaN).
- `EMBED_SCRIPT`: the page's last script, drawing every chart into its <div>.
"""

from __future__ import annotations

import json
from typing import Any

from bokeh.core.types import ID
from bokeh.embed import json_item
from bokeh.model import Model
from bokeh.resources import Resources


def bokeh_js() -> str:
    """BokehJS's core bundle as inline <script> tags (no network; widgets, tables, GL and MathJax left out)."""
    return Resources(mode="inline", components=["bokeh"], log_level="warn").render_js()


def _renamed(node: Any, ids: dict[str, str], prefix: str) -> Any:
    """A copy of a Bokeh document's JSON with every model id (definitions and refs: dicts with "id") renamed.

    A copy, not an edit in place: Bokeh's JSON shares ref dicts between places, which an in-place
    rename would rename twice.
    """
    if isinstance(node, dict):
        out = {k: _renamed(v, ids, prefix) for k, v in node.items()}
        if isinstance(node.get("id"), str):
            out["id"] = ids.setdefault(node["id"], f"{prefix}-{len(ids) + 1}")
        return out
    if isinstance(node, (list, tuple)):  # a map's entries come as (key, value) tuples
        return [_renamed(v, ids, prefix) for v in node]
    return node


def chart_item(model: Model, target: str) -> dict[str, Any]:
    """The JSON item of `model` to draw into the element with id `target`, its ids renamed `<target>-<n>`."""
    item = json_item(model, ID(target))
    ids: dict[str, str] = {}
    doc = _renamed(item["doc"], ids, target)
    return {**item, "doc": doc, "root_id": ids[item["root_id"]]}


def script_json(obj: Any) -> str:
    """Compact JSON to place inside <script type="application/json">; raises ValueError on NaN or infinity."""
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c")  # "<" only occurs inside strings, where the escape means the same


EMBED_SCRIPT = """
document.querySelectorAll('script[type="application/json"][data-chart]').forEach(function (el) {
  Bokeh.embed.embed_item(JSON.parse(el.textContent), el.dataset.chart);
});
"""

"""The HTML of report.html: a `Page` of sections and charts, tables, and the day table's filter script.

Everything is escaped on the way in (`esc`); the page holds its style, BokehJS and its two small
scripts (the charts' embedding and the day filters) inline, so it opens offline from any folder.
Nothing depends on the clock or on randomness: the same report gives the same bytes.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bokeh.model import Model

from autovend.evaluation.htmlreport.embed import EMBED_SCRIPT, bokeh_js, chart_item, script_json

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0 auto; max-width: 1400px;
  padding: 0 16px 48px; color: #222; }
header { border-bottom: 1px solid #ddd; margin-bottom: 8px; }
nav { position: sticky; top: 0; background: #fff; padding: 6px 0; border-bottom: 1px solid #eee; z-index: 10; }
nav a { margin-right: 14px; text-decoration: none; color: #1f5fa8; white-space: nowrap; }
section { margin: 22px 0; }
h1 { font-size: 22px; margin: 16px 0 6px; }
h2 { font-size: 18px; margin: 0 0 8px; }
h3 { font-size: 15px; margin: 14px 0 4px; }
.facts { margin: 4px 0 12px; padding-left: 18px; }
.chart { min-height: 320px; margin: 8px 0 16px; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; }
table { border-collapse: collapse; margin: 6px 0; }
th, td { border-bottom: 1px solid #e4e4e4; padding: 3px 8px; vertical-align: top; text-align: left; }
th { background: #f6f6f6; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.note { color: #555; }
.wide { overflow-x: auto; }
.warn { color: #a33; }
.day-box { max-height: 78vh; overflow: auto; border: 1px solid #e4e4e4; }
#day-table { font-size: 12px; margin: 0; }
#day-table th, #day-table td { padding: 2px 5px; }
#day-table thead th { position: sticky; top: 0; z-index: 5; }
#day-table tbody tr { scroll-margin-top: 48px; }
#day-table tr:target td { background: #fff3b0; }
#day-table td.actions { min-width: 200px; max-width: 360px; }
#day-table td.date { white-space: nowrap; }
#day-filters { display: flex; flex-wrap: wrap; gap: 10px 18px; align-items: center; margin: 6px 0; }
#day-filters input[type=number] { width: 5em; }
.finding-list { margin: 2px 0 10px; padding-left: 18px; }
"""

FILTER_SCRIPT = """
(function () {
  var table = document.getElementById('day-table');
  var form = document.getElementById('day-filters');
  if (!table || !form) return;
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  var count = document.getElementById('day-count');
  function has(list, word) { return (' ' + list + ' ').indexOf(' ' + word + ' ') >= 0; }
  function apply() {
    var e = form.elements;
    var lo = parseInt(e.from.value, 10), hi = parseInt(e.to.value, 10);
    var text = e.text.value.trim().toLowerCase(), mode = e.finding.value;
    var shown = 0;
    rows.forEach(function (r) {
      var d = parseInt(r.dataset.day, 10);
      var ok = (isNaN(lo) || d >= lo) && (isNaN(hi) || d <= hi) &&
        (!text || r.textContent.toLowerCase().indexOf(text) >= 0) &&
        (!mode || (mode === '*' ? r.dataset.find !== '' : has(r.dataset.find, mode))) &&
        (!e.rejected.checked || r.dataset.rej !== '0') && (!e.acted.checked || r.dataset.act === '1');
      r.hidden = !ok;
      if (ok) shown++;
    });
    count.textContent = shown + ' of ' + rows.length + ' days shown';
  }
  function reveal() {
    var row = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    if (row && row.hidden) { form.reset(); apply(); row.scrollIntoView(); }
  }
  form.addEventListener('input', apply);
  form.addEventListener('change', apply);
  form.addEventListener('reset', function () { setTimeout(apply, 0); });
  window.addEventListener('hashchange', reveal);
  apply();
  reveal();
})();
"""


def esc(value: object) -> str:
    """Text escaped for HTML (quotes included, so it is safe in attributes too)."""
    return html.escape(str(value), quote=True)


@dataclass(frozen=True)
class Cell:
    """A table cell: its HTML (already escaped), whether it is a number (right-aligned) and a tooltip."""

    html: str
    numeric: bool = False
    title: str = ""
    css: str = ""  # a CSS class (numbers get "num")

    def render(self, tag: str = "td") -> str:
        """The cell as <td> (or `tag`)."""
        classes = " ".join(c for c in ("num" if self.numeric else "", self.css) if c)
        cls = f' class="{classes}"' if classes else ""
        title = f' title="{esc(self.title)}"' if self.title else ""
        return f"<{tag}{cls}{title}>{self.html}</{tag}>"


def text(value: object, title: str = "") -> Cell:
    """A text cell."""
    return Cell(esc(value), False, title)


def num(value: str, title: str = "") -> Cell:
    """A number cell (the value already formatted)."""
    return Cell(esc(value), True, title)


def table(
    header: Sequence[Cell], rows: Iterable[Sequence[Cell]], *, table_id: str = "", row_attrs: Sequence[str] = ()
) -> str:
    """An HTML table; `row_attrs` gives each body row's attributes (e.g. 'id="day-3" data-day="3"')."""
    tid = f' id="{esc(table_id)}"' if table_id else ""
    head = "".join(c.render("th") for c in header)
    body = []
    for i, row in enumerate(rows):
        attrs = f" {row_attrs[i]}" if i < len(row_attrs) and row_attrs[i] else ""
        body.append(f"<tr{attrs}>" + "".join(c.render() for c in row) + "</tr>")
    return f"<table{tid}><thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(body) + "\n</tbody></table>"


@dataclass
class Page:
    """A report page being built: its title, facts under the title, sections and the charts they show."""

    title: str
    facts: list[str] = field(default_factory=list)  # HTML list items (already escaped)
    sections: list[tuple[str, str, str]] = field(default_factory=list)  # (id, heading, body HTML)
    charts: list[tuple[str, str]] = field(default_factory=list)  # (div id, JSON item)
    top: str = ""  # HTML under the facts, above the navigation bar (report.html's scorecard and config)
    style: str = ""  # CSS added to STYLE

    def chart(self, target: str, model: Model) -> str:
        """Register a chart to draw into a <div id=`target`>; returns that div."""
        if any(t == target for t, _ in self.charts):
            raise ValueError(f"chart id {target!r} is used twice on the page")
        self.charts.append((target, script_json(chart_item(model, target))))
        return f'<div class="chart" id="{esc(target)}"></div>'

    def section(self, section_id: str, heading: str, body: str) -> None:
        """Add a section (listed in the navigation bar)."""
        self.sections.append((section_id, heading, body))

    def render(self) -> str:
        """The whole page."""
        nav = "".join(f'<a href="#{esc(sid)}">{esc(h)}</a>' for sid, h, _ in self.sections)
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{esc(self.title)}</title>",
            f"<style>{STYLE}{self.style}</style>",
            bokeh_js(),
            "</head>",
            "<body>",
            f"<header><h1>{esc(self.title)}</h1>",
            '<ul class="facts">' + "".join(f"<li>{f}</li>" for f in self.facts) + f"</ul>{self.top}</header>",
            f"<nav>{nav}</nav>",
        ]
        for sid, heading, body in self.sections:
            parts.append(f'<section id="{esc(sid)}"><h2>{esc(heading)}</h2>\n{body}\n</section>')
        for target, item in self.charts:
            parts.append(f'<script type="application/json" data-chart="{esc(target)}">{item}</script>')
        parts.append(f"<script>{EMBED_SCRIPT}</script>")
        parts.append(f"<script>{FILTER_SCRIPT}</script>")
        parts += ["</body>", "</html>", ""]
        return "\n".join(parts)

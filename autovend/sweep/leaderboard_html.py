"""leaderboard.html of a sweep: the leaderboard's tables as one self-contained page, with each run's final net assets.

The same groups, ranks and cells as leaderboard.md (`leaderboard.tables`: one table per world hash and
length, never pooled across them), drawn with the run reports' page and chart code (bokeh, inlined;
no network). Each group shows its runs' final net assets (dots by agent, the agent's mean ± sample std),
the ranked agents (tie-aware ranks from paired intervals, the verified runs, the normalised score) with
every headline metric as mean ± std (definitions as tooltips), links to each run's own report.html, and
the paired differences of net assets.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from autovend.evaluation.comparability import short_hash
from autovend.evaluation.definitions import DEFINITIONS, HEADLINE, metric_header
from autovend.evaluation.htmlreport import charts as ch
from autovend.evaluation.htmlreport.page import Cell, Page, esc, num, table, text
from autovend.evaluation.rundata import HTML_REPORT_FILE
from autovend.io import atomic_write_text
from autovend.sweep.leaderboard import (
    NORMALISED,
    PAIRED_HEADER,
    PAIRED_INTRO,
    RANK_NOTE,
    Table,
    group_key,
    paired_rows,
    show,
    tables,
)
from autovend.sweep.results import ResultRow

LEADERBOARD_HTML_FILE = "leaderboard.html"


def _slug(text_: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text_).strip("-").lower() or "world"


def _run_link(row: ResultRow, out_dir: Path) -> str:
    """The run's folder name, linked to its report.html when it has one."""
    label = f"s{row.seed}"
    if (out_dir / row.run_dir / HTML_REPORT_FILE).is_file():
        return f'<a href="{esc(Path(row.run_dir, HTML_REPORT_FILE).as_posix())}">{esc(label)}</a>'
    return esc(label)


def _group_section(page: Page, index: int, t: Table, rows: Sequence[ResultRow], out_dir: Path) -> None:
    key = (t.world, t.world_hash, t.days, t.horizon_days)
    mine = [r for r in rows if group_key(r) == key]
    order = {line.agent: i for i, line in enumerate(t.lines)}
    mine.sort(key=lambda r: (order.get(r.agent, len(order)), r.seed))
    labels = [f"{r.agent} s{r.seed}" for r in mine]
    agents = [r.agent for r in mine]
    values = [float(r.net_assets) if r.net_assets is not None else float("nan") for r in mine]
    summary = pd.DataFrame(
        {
            "net_assets": [line.cells["net_assets"].mean for line in t.lines],
            "net_assets_std": [line.cells["net_assets"].std for line in t.lines],
        },
        index=[line.agent for line in t.lines],
    )
    chart = page.chart(f"chart-final-{index}", ch.final_assets_chart(labels, agents, values, summary, t.currency))
    keys = list(HEADLINE)
    header = [text("rank"), text("agent"), num("runs"), text("runs (report)"), num("verified")]
    header.append(num(metric_header("net_assets", t.currency), DEFINITIONS.get("net_assets", "")))
    header.append(num("Normalised score", "(agent − hold) / (oracle − hold); the oracle is privileged"))
    header += [num(metric_header(k, t.currency), DEFINITIONS.get(k, "")) for k in keys[1:]]
    header.append(num("API cost (USD)"))
    body = []
    for line in t.lines:
        links = " ".join(_run_link(r, out_dir) for r in mine if r.agent == line.agent)
        cells = [num(line.rank), text(line.shown), num(str(len(line.seeds))), Cell(links), num(line.verified_text)]
        cells.append(num(show("net_assets", line.cells["net_assets"]), DEFINITIONS.get("net_assets", "")))
        cells.append(num(show(NORMALISED, line.cells[NORMALISED])))
        cells += [num(show(k, line.cells[k]), DEFINITIONS.get(k, "")) for k in keys[1:]]
        cells.append(num(show("api_cost_usd", line.cells["api_cost_usd"])))
        body.append(cells)
    paired = _paired_table(t)
    notes = "".join(f"<li>{esc(n)}</li>" for n in t.notes)
    heading = f"{t.world}: {t.world_name} ({short_hash(t.world_hash)}), {t.days} of {t.horizon_days} days"
    page.section(
        f"group-{index}-{_slug(t.world)}",
        heading,
        chart + '<div class="wide">' + table(header, body) + "</div>" + paired + (f"<ul>{notes}</ul>" if notes else ""),
    )


def _paired_table(t: Table) -> str:
    """The group's paired differences of net assets (`leaderboard.paired_rows`) as a table."""
    rows = paired_rows(t)
    if not rows:
        return ""
    header = [text(PAIRED_HEADER[0]), *(num(h) for h in PAIRED_HEADER[1:])]
    body = [[text(r[0]), *(num(c) for c in r[1:])] for r in rows]
    return (
        f"<p>{esc(PAIRED_INTRO.format(currency=t.currency))}</p>"
        + '<div class="wide">'
        + table(header, body)
        + "</div>"
    )


def leaderboard_html(
    rows: Sequence[ResultRow], out_dir: str | Path, unfinished: Sequence[str] = (), spec_runs: int | None = None
) -> str:
    """The page (see the module docstring); links are relative to `out_dir`, the sweep's folder."""
    out_dir = Path(out_dir)
    total = spec_runs if spec_runs is not None else len(rows) + len(unfinished)
    facts = [
        f"{len(rows)} of {total} runs finished",
        "each cell: mean over the agent's runs (seeds) ± sample standard deviation (ddof 1; none for one run)",
        "runs on different world hashes or of different lengths are never pooled: one table per world and length",
        RANK_NOTE,
    ]
    page = Page("Sweep leaderboard", [esc(f) for f in facts])
    for i, t in enumerate(tables(rows)):
        _group_section(page, i, t, rows, out_dir)
    if unfinished:
        page.section(
            "unfinished", "Runs without a result", "<ul>" + "".join(f"<li>{esc(u)}</li>" for u in unfinished) + "</ul>"
        )
    return page.render()


def write_leaderboard_html(
    rows: Sequence[ResultRow], out_dir: str | Path, unfinished: Sequence[str] = (), spec_runs: int | None = None
) -> Path:
    """Write OUT/leaderboard.html (replaced atomically); return its path."""
    path = Path(out_dir) / LEADERBOARD_HTML_FILE
    atomic_write_text(path, leaderboard_html(rows, out_dir, unfinished, spec_runs))
    return path

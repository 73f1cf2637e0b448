"""report.html of a comparison: the runs side by side (net assets), mean ± std per agent, every run's metrics.

`comparison_html(runs, table, summary, check, out_dir)` takes what `report.write_comparison` computed
(the `compare` table, the `summarize` summary and the comparability check); `write_comparison_html`
writes it. Each run's name links to its own report.html when it has one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from autovend.currency import common_currency
from autovend.evaluation.comparability import Comparability, short_hash
from autovend.evaluation.definitions import (
    DEFINITIONS,
    FAILURE_DEFINITIONS,
    FAILURE_LABELS,
    HEADLINE,
    format_metric,
    metric_header,
    metric_unit,
)
from autovend.evaluation.htmlreport import charts as ch
from autovend.evaluation.htmlreport.page import Cell, Page, esc, num, table, text
from autovend.evaluation.rundata import HTML_REPORT_FILE, RunData
from autovend.io import atomic_write_text


def agent_stats(table_: pd.DataFrame) -> pd.DataFrame:
    """Per agent (first-seen order): runs, then for every headline metric its mean and sample std (ddof 1).

    Columns `<key>` (mean) and `<key>_std` (NaN for one run or fewer than two values).
    """
    keys = [k for k in HEADLINE if k in table_]
    num_ = table_[["agent", *keys]].copy()
    for k in keys:
        num_[k] = pd.to_numeric(num_[k], errors="coerce")
    g = num_.groupby("agent", sort=False)
    out = g[keys].mean()
    std = g[keys].std(ddof=1).add_suffix("_std")
    out = out.join(std)
    out.insert(0, "runs", g.size())
    return out


def unique_labels(names: Sequence[str]) -> list[str]:
    """The names with repeats numbered ("a", "a (2)"): a forced comparison may hold a run twice."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} ({seen[n]})")
    return out


def _mean_std(key: str, mean: float, std: float) -> str:
    cell = format_metric(key, mean)
    if cell != "–" and np.isfinite(std):
        cell += " ± " + format_metric(key, std)
    return cell


def _report_link(run: RunData, out_dir: Path) -> str:
    """The run's name, linked to its report.html (path relative to the comparison) when it has one."""
    if run.run_dir is not None and (run.run_dir / HTML_REPORT_FILE).exists():
        rel = Path(os.path.relpath(run.run_dir / HTML_REPORT_FILE, out_dir)).as_posix()
        return f'<a href="{esc(rel)}">{esc(run.name)}</a>'
    return esc(run.name)


def comparison_html(
    runs: Sequence[RunData],
    table_: pd.DataFrame,
    summary: pd.DataFrame,
    check: Comparability | None,
    out_dir: str | Path,
) -> str:
    """The report.html page of a comparison (see the module docstring)."""
    out_dir = Path(out_dir)
    cur = common_currency(r.world.economics.currency for r in runs)
    agents = [r.agent for r in runs]
    worlds = sorted({short_hash(r.world_hash) or "in memory" for r in runs})
    facts = [
        f"{len(runs)} runs of {len(set(agents))} agent(s): {esc(', '.join(dict.fromkeys(agents)))}",
        f"world {esc(', '.join(sorted({r.world.name for r in runs})))} (hash {esc(', '.join(worlds))}), "
        f"days {esc(', '.join(str(d) for d in sorted({r.days for r in runs})))}",
    ]
    page = Page("Comparison of runs", facts)
    if check is not None and (check.refusals or check.notes):
        items = [f'<li class="warn">not comparable, compared anyway: {esc(r)}</li>' for r in check.refusals]
        items += [f"<li>{esc(n)}</li>" for n in check.notes]
        page.section("caveats", "Caveats", "<ul>" + "".join(items) + "</ul>")
    palette = {a: ch.color(i) for i, a in enumerate(dict.fromkeys(agents))}
    lines = []
    seen: dict[str, int] = {}
    for r in runs:
        d = r.daily
        days = [0, *d["day"].astype(int).tolist()]
        values = [r.start_cash, *d["net_assets"].astype(float).tolist()]
        dash = ch.DASHES[seen.get(r.agent, 0) % len(ch.DASHES)]  # an agent's runs: one colour, their own dashes
        seen[r.agent] = seen.get(r.agent, 0) + 1
        lines.append(ch.Line(f"{r.name} ({r.agent})", days, values, palette[r.agent], width=1.8, dash=dash))
    start = runs[0].start_cash if runs else None
    net_chart = ch.line_chart("Net assets of each run (colour: agent, dashes: run)", cur, lines, start)
    finals = [float(x) for x in pd.to_numeric(table_["net_assets"], errors="coerce").fillna(0.0)]
    final_chart = ch.final_assets_chart(unique_labels(table_["run"].astype(str).tolist()), agents, finals, summary, cur)
    page.section(
        "net-assets",
        "Net assets",
        page.chart("chart-net-assets", net_chart) + page.chart("chart-final-assets", final_chart),
    )
    # metrics as rows, agents (runs) as columns: a handful of them fits the page whatever the number of metrics
    keys = [k for k in HEADLINE if k in table_]
    stats = agent_stats(table_)
    header = [text("metric"), text("unit")] + [num(f"{a} ({int(r['runs'])} runs)") for a, r in stats.iterrows()]
    rows = [
        [text(HEADLINE[k][0], DEFINITIONS[k]), text(metric_unit(k, cur))]
        + [num(_mean_std(k, r[k], r[f"{k}_std"])) for _, r in stats.iterrows()]
        for k in keys
    ]
    page.section("agents", "By agent (mean ± sample std over runs)", table(header, rows))
    records = table_.to_dict("records")
    header = [text("")] + [Cell(_report_link(run, out_dir), True) for run in runs]
    rows = [
        [text("agent")] + [num(str(rec["agent"])) for rec in records],
        [text("seed")] + [num(str(rec["seed"])) for rec in records],
        [text("days")] + [num(str(rec["days"])) for rec in records],
        [text("world")] + [num(short_hash(str(rec["world_hash"] or ""))) for rec in records],
    ]
    rows += [
        [text(metric_header(k, cur), DEFINITIONS[k])] + [num(format_metric(k, rec[k])) for rec in records] for k in keys
    ]
    page.section("runs", "Runs", '<div class="wide">' + table(header, rows) + "</div>")
    fails = [k for k in FAILURE_LABELS if k in table_]
    header = [text("")] + [Cell(_report_link(run, out_dir), True) for run in runs]
    rows = [[text(FAILURE_LABELS[k], FAILURE_DEFINITIONS[k])] + [num(str(rec[k])) for rec in records] for k in fails]
    page.section("failures", "Failure modes (counts per run)", table(header, rows))
    header = [text("metric"), text("unit"), text("definition")]
    rows = [[text(HEADLINE[k][0]), text(metric_unit(k, cur)), text(DEFINITIONS[k])] for k in keys]
    rows += [[text(FAILURE_LABELS[k]), text("count"), text(FAILURE_DEFINITIONS[k])] for k in fails]
    page.section("definitions", "Definitions", table(header, rows))
    return page.render()


def write_comparison_html(
    runs: Sequence[RunData],
    table_: pd.DataFrame,
    summary: pd.DataFrame,
    check: Comparability | None,
    path: str | Path,
    out_dir: str | Path | None = None,
) -> Path:
    """Write `comparison_html` to `path` (atomically; links relative to `out_dir`, default its folder)."""
    path = Path(path)
    atomic_write_text(path, comparison_html(runs, table_, summary, check, out_dir or path.parent))
    return path

"""report.html of one run: a scorecard, then its charts, metrics with definitions, findings and the day table.

`run_html(run, metrics, settings)` builds the page from a `RunData` and its metrics (the content of
metrics.json); `write_run_html` writes it atomically. The page opens with the scorecard (`scorecard`: final
net assets, the normalised score's slot, the 14 metrics at a glance) and the agent config folded; the day
table scrolls in a box of its own. Findings link to the rows of the day table
(`#day-<n>`), and the table filters by day range, text, finding, rejections and actions.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from autovend.evaluation.definitions import (
    DEFINITIONS,
    FAILURE_DEFINITIONS,
    FAILURE_LABELS,
    HEADLINE,
    format_metric,
    metric_unit,
)
from autovend.evaluation.htmlreport import charts as ch
from autovend.evaluation.htmlreport.page import Cell, Page, esc, num, table, text
from autovend.evaluation.htmlreport.scorecard import SCORECARD_STYLE, NormalisedScore, config_block, scorecard_html
from autovend.evaluation.htmlreport.tables import (
    Finding,
    day_table,
    findings,
    machine_revenue,
    price_path,
    site_revenue,
    stockouts,
)
from autovend.evaluation.rundata import RunData
from autovend.evaluation.settings import EvalSettings
from autovend.io import atomic_write_text

FINDINGS_LISTED = 50  # findings listed per failure mode; the day table's filter shows every day with one


MADE_TO_ORDER_NOTE = (
    '<p class="note" id="made-to-order">Made to order: a unit is the ingredients of one serving and a machine\'s '
    "capacity the servings it holds; ingredients do not expire, so this run has no expiry, no expired sale and no "
    "fine.</p>"
)


def run_facts(run: RunData) -> list[str]:
    """The lines under the title: agent and seed, world, days, code version, API cost (the config: `config_block`).

    Wall time is left out (report.md has it): it changes from one replay of the same episode to the next,
    and the page should not.
    """
    meta = run.meta
    world_hash = run.world_hash[:12] or "not recorded"
    facts = [
        f"agent <b>{esc(run.agent)}</b>, seed {run.seed}",
        f"world {esc(run.world.name)} (hash {esc(world_hash)}), days settled {run.days} of {run.world.horizon_days}",
        f"code version {esc(meta.get('code_version', '?'))}",
    ]
    if meta.get("api_cost_usd") is not None:
        facts.append(f"API cost {float(meta['api_cost_usd']):.4f} USD")
    return facts


def _money(x: float) -> str:
    return f"{x:,.2f}"


def metrics_table(metrics: dict[str, Any], currency: str) -> str:
    """Metric, value, unit (money in `currency`) and one-line definition of every headline metric."""
    header = [text("metric"), num("value"), text("unit"), text("definition")]
    rows = [
        [
            text(label),
            num(format_metric(key, metrics.get(key))),
            text(metric_unit(key, currency)),
            text(DEFINITIONS[key]),
        ]
        for key, (label, _, _, _) in HEADLINE.items()
    ]
    return table(header, rows)


def findings_html(metrics: dict[str, Any], found: list[Finding]) -> str:
    """Per failure mode: count, definition and its findings, each linked to its day's row."""
    parts = []
    for mode, label in FAILURE_LABELS.items():
        mine = [f for f in found if f.mode == mode]
        count = int(metrics.get("failure_counts", {}).get(mode, len(mine)))
        parts.append(f'<h3 id="finding-{esc(mode)}">{esc(label)}: {count}</h3>')
        parts.append(f'<p class="note">{esc(FAILURE_DEFINITIONS[mode])}</p>')
        if not mine:
            continue
        items = [f'<li><a href="#day-{f.day}">day {f.day}</a>: {esc(f.details)}</li>' for f in mine[:FINDINGS_LISTED]]
        parts.append('<ul class="finding-list">' + "".join(items) + "</ul>")
        if len(mine) > FINDINGS_LISTED:
            parts.append(
                f'<p class="note">and {len(mine) - FINDINGS_LISTED} more: filter the day table by '
                f"&quot;{esc(label)}&quot;.</p>"
            )
    return "\n".join(parts)


def day_section(run: RunData, found: list[Finding]) -> str:
    """The filters and the day-by-day table (one row per day, id day-<n>)."""
    rows_df, per_day = day_table(run, found)
    options = ['<option value="">any day</option>', '<option value="*">days with a finding</option>']
    options += [f'<option value="{esc(m)}">{esc(label)}</option>' for m, label in FAILURE_LABELS.items()]
    filters = (
        '<form id="day-filters" onsubmit="return false">'
        '<label>days <input type="number" name="from" min="1" placeholder="from"> to '
        '<input type="number" name="to" min="1" placeholder="to"></label>'
        '<label>text <input type="search" name="text" placeholder="e.g. restock"></label>'
        f'<label>findings <select name="finding">{"".join(options)}</select></label>'
        '<label><input type="checkbox" name="rejected"> with rejected items</label>'
        '<label><input type="checkbox" name="acted"> with accepted actions</label>'
        '<button type="reset">clear</button> <span id="day-count" class="note"></span></form>'
    )
    head = ["day", "date", "actions", "rejected", "units sold", "revenue", "gross profit", "purchases"]
    head += ["operating costs", "write-offs", "net", "net assets", "visits", "lost demand", "findings"]
    tips = {
        "actions": "the day's tool calls: batch tools with their items, then reads",
        "rejected": "items the batch tools rejected",
        "operating costs": "warehouse rent + daily fee + visit fees"
        + ("" if run.world.made_to_order else " + fines for expired units sold"),
        "write-offs": "discarded units at cost" if run.world.made_to_order else "expired and discarded units at cost",
        "net": "the day's change in net assets",
        "lost demand": "units customers wanted but the shelf did not hold (hidden log)",
    }
    header = [Cell(esc(h), i >= 3 and h != "findings", tips.get(h, "")) for i, h in enumerate(head)]
    rows, attrs = [], []
    for r in rows_df.itertuples(index=False):
        modes = per_day.get(int(r.day), Counter())
        links = ", ".join(
            f'<a href="#finding-{esc(m)}">{esc(FAILURE_LABELS[m])}{f" ×{n}" if n > 1 else ""}</a>'
            for m, n in modes.items()
        )
        rows.append(
            [
                Cell(f'<a href="#day-{r.day}">{r.day}</a>', True),
                Cell(esc(r.date), css="date"),
                Cell(esc(r.actions), css="actions"),
                num(str(r.rejected)),
                num(f"{r.units_sold:,}"),
                num(_money(r.revenue)),
                num(_money(r.gross_profit)),
                num(_money(r.purchase)),
                num(_money(r.operating)),
                num(_money(r.writeoffs)),
                num(_money(r.net)),
                num(_money(r.net_assets)),
                num(str(r.visits)),
                num(f"{r.lost:,}"),
                Cell(links),
            ]
        )
        attrs.append(
            f'id="day-{r.day}" data-day="{r.day}" data-find="{esc(" ".join(modes))}" '
            f'data-rej="{r.rejected}" data-act="{int(r.accepted > 0)}"'
        )
    return filters + '<div class="day-box">' + table(header, rows, table_id="day-table", row_attrs=attrs) + "</div>"


def run_html(
    run: RunData,
    metrics: dict[str, Any],
    settings: EvalSettings | None = None,
    normalised: NormalisedScore | None = None,
) -> str:
    """The report.html page of `run` (`metrics`: its compute_metrics dict; `normalised`: the score, when known)."""
    cur = run.world.economics.currency
    top = scorecard_html(metrics, run.final_net_assets, run.start_cash, cur, normalised) + config_block(
        run.meta.get("agent_config")
    )
    page = Page(f"Run {run.name}", run_facts(run), top=top, style=SCORECARD_STYLE)
    d = run.daily
    days = [0, *d["day"].astype(int).tolist()]
    assets = ch.Line("net assets", days, [run.start_cash, *d["net_assets"].astype(float).tolist()], ch.color(0))
    growth = float(metrics.get("net_asset_growth") or 0.0)
    page.section(
        "net-assets",
        "Net assets",
        f'<p class="note">Start cash {_money(run.start_cash)} {esc(cur)} (dotted line); final '
        f"{_money(run.final_net_assets)} {esc(cur)}, growth {_money(growth)} {esc(cur)}.</p>"
        + page.chart(
            "chart-net-assets", ch.line_chart("Net assets (cash + inventory at cost)", cur, [assets], run.start_cash)
        ),
    )
    cash = {"cash": "cash", "inventory_at_cost": "inventory at cost (all)"}
    cash |= {"shelf_value": "on shelves", "warehouse_value": "in the warehouse", "in_transit_value": "in transit"}
    units = {"shelf_units": "on shelves", "warehouse_units": "in the warehouse", "in_transit_units": "in transit"}
    made = run.world.made_to_order  # stock is ingredients, counted in servings (`World.made_to_order`)
    stock_title, stock_unit = ("Ingredient stock (servings)", "servings") if made else ("Stock (units)", "units")
    page.section(
        "cash-stock",
        "Cash, inventory and ingredient stock" if made else "Cash, inventory and stock",
        (MADE_TO_ORDER_NOTE if made else "")
        + page.chart("chart-cash-inventory", ch.daily_lines(d, cash, "Cash and inventory value at cost", cur))
        + page.chart("chart-stock", ch.daily_lines(d, units, stock_title, stock_unit)),
    )
    per_machine, per_site = machine_revenue(run), site_revenue(run)
    sites = list(dict.fromkeys(per_machine["site_type"]))
    site_color = {s: ch.color(i) for i, s in enumerate(sites)}
    machine_chart = ch.bar_chart(
        "Revenue per machine (colour: site type)",
        per_machine["device_id"].tolist(),
        per_machine["revenue"].tolist(),
        [site_color[s] for s in per_machine["site_type"]],
        f"revenue ({cur})",
        {"site_type": per_machine["site_type"].tolist(), "units": per_machine["units"].tolist()},
    )
    site_chart = ch.bar_chart(
        "Revenue per machine per day, by site type",
        per_site["site_type"].tolist(),
        per_site["revenue_per_machine_day"].tolist(),
        [site_color[s] for s in per_site["site_type"]],
        f"{cur} per machine per day",
        {"machines": per_site["machines"].tolist(), "revenue": per_site["revenue"].tolist()},
    )
    page.section(
        "revenue",
        "Revenue by machine and site type",
        '<div class="pair">'
        + page.chart("chart-revenue-machine", machine_chart)
        + page.chart("chart-revenue-site", site_chart)
        + "</div>",
    )
    lost = stockouts(run)
    what = "servings" if made else "units"
    page.section(
        "stockouts",
        "Ingredients run out and lost demand" if made else "Stockouts and lost demand",
        f'<p class="note">Over the run customers wanted {int(lost["demand"].sum()):,} {what} and could not buy '
        f"{int(lost['lost'].sum()):,} of them ({_money(float(lost['lost_revenue'].sum()))} {esc(cur)} at the "
        "prices in force).</p>" + page.chart("chart-stockouts", ch.stockout_chart(lost, cur, what)),
    )
    band = run.world.economics.price_band
    path = price_path(run)
    body = (
        page.chart("chart-prices", ch.price_chart(path, band))
        if len(path)
        else '<p class="note">No product was on a shelf: no price was in force.</p>'
    )
    page.section(
        "prices",
        "Price multiplier",
        f'<p class="note">Dashed: the price band ({band[0]:g}-{band[1]:g} x reference); dotted: reference prices.</p>'
        + body,
    )
    page.section(
        "metrics",
        "Metrics",
        metrics_table(metrics, cur)
        + '<p class="note">Exact definitions: the docstrings of autovend.evaluation.metrics.</p>',
    )
    found = findings(run, settings)
    page.section("failures", "Failure modes", findings_html(metrics, found))
    page.section("day-by-day", "Day by day", day_section(run, found))
    return page.render()


def write_run_html(
    run: RunData,
    metrics: dict[str, Any],
    path: str | Path,
    settings: EvalSettings | None = None,
    normalised: NormalisedScore | None = None,
) -> Path:
    """Write `run_html` to `path` (atomically); returns the path."""
    path = Path(path)
    atomic_write_text(path, run_html(run, metrics, settings, normalised))
    return path

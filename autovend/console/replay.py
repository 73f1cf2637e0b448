"""The replay app: one or more run folders side by side, a day slider moving every panel.

Routes: `GET /` the page, on the last day, or on day N with `?day=N` (a link to a day: the slider keeps the
address in step); `GET /runs/<i>/days/<d>` the HTML of run i's day d (what the slider fetches); `GET /api/runs`
the runs' facts and daily series, `GET /api/runs/<i>/days/<d>` a day as JSON (`DayView.to_json`). A run shorter
than the slider's day shows its last day. Shelves show each product's name beside its id, and a day's tool calls
their results as tables (`results`). Every request passes `autovend.console.security.ConsoleGate` first (Host,
Origin, the bearer token if set).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

from autovend.console.chart import Series, line_chart
from autovend.console.html import PALETTE, Html, Json, esc, kpis, money, page, table
from autovend.console.results import call_html
from autovend.console.security import gated_app, new_csrf_token
from autovend.console.server import DEFAULT_HOST
from autovend.console.timeline import DayView, Timeline
from autovend.evaluation.rundata import RunData


@dataclass(frozen=True)
class ReplayRun:
    """One run of the replay: its label and its timeline."""

    label: str
    timeline: Timeline


def day_html(view: DayView) -> str:
    """The panels of one day: key figures, machines, warehouse, tool calls, notebook."""
    led = view.ledger
    figures = kpis(
        [
            ("net_assets", "net assets", money(led["net_assets"])),
            ("cash", "cash", money(led["cash"])),
            ("inventory", "inventory at cost", money(led["inventory_at_cost"])),
            ("revenue", "revenue", money(led["revenue"])),
            ("units_sold", "units sold", f"{int(led['units_sold']):,}"),
            ("net", "day's net", money(led["net"])),
        ]
    )
    costs = ", ".join(
        f"{k.replace('_', ' ')} {money(led[k])}"
        for k in ("purchase", "warehouse_rent", "daily_fee", "visit", "expired_fine")
        if led.get(k)
    )
    machines = []
    for m in view.machines:
        fill = 100.0 * m.units / m.capacity if m.capacity else 0.0
        rows = "".join(
            f'<tr><td class="product"><span class="name">{esc(i.name)}</span> <span class="id">{esc(i.sku_id)}</span>'
            f'</td><td class="num">{i.units:,}</td><td class="num">{money(i.price)}</td></tr>'
            for i in m.items
        )
        shelf = (
            f"<table><thead><tr><th>product</th><th class=num>units</th><th class=num>price</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )
        machines.append(
            f'<div class="machine" data-device="{esc(m.device_id)}"><b>{esc(m.device_id)}</b> '
            f"<span class=facts>{esc(m.location)}</span>"
            f'<div class="bar" title="{m.units} of {m.capacity} units"><span style="width:{fill:.1f}%"></span></div>'
            f"{m.units:,}/{m.capacity:,} units · sold {m.sold:,} · revenue {money(m.revenue)}"
            f'<div class="scroll">{shelf if rows else ""}</div></div>'
        )
    warehouse = [(w.sku_id, w.name, w.units) for w in view.warehouse]
    calls = [call_html(c.seq, c.tool, c.arguments, c.ok, c.result, c.error) for c in view.calls]
    return (
        f'<h3 class="day-title">Day {view.day} · {esc(view.date)}</h3>{figures}'
        f'<p class="facts">costs: {esc(costs) or "none"}</p>'
        f'<h3>Machines at the close of the day</h3><div class="machines">{"".join(machines)}</div>'
        f"<h3>Warehouse ({sum(w[2] for w in warehouse):,} units)</h3>"
        f'<div class="scroll">{table(["sku", "name", "units"], warehouse) if warehouse else "<p>empty</p>"}</div>'
        f'<h3>Tool calls ({len(view.calls)})</h3><div class="calls">{"".join(calls) or "<p>none</p>"}</div>'
        f'<h3>Notebook</h3><pre class="notebook">{esc(view.notebook) or "(empty)"}</pre>'
    )


def run_section(index: int, run: ReplayRun, day: int) -> str:
    """One run's column: facts, the chart of net assets, cash and inventory, and `day` (its last, if shorter)."""
    tl = run.timeline
    shown = min(day, tl.n_days)
    meta = tl.run.meta
    d = tl.daily
    chart = line_chart(
        [
            Series("net assets", d["net_assets"].tolist(), PALETTE[0]),
            Series("cash", d["cash"].tolist(), PALETTE[1]),
            Series("inventory at cost", d["inventory_at_cost"].tolist(), PALETTE[2]),
        ],
        marker_day=max(shown, 1),
        title=f"{run.label}: net assets, cash and inventory at cost by day ({tl.run.world.economics.currency})",
    )
    facts = (
        f"agent {esc(tl.run.agent)}, seed {tl.run.seed}, world {esc(tl.run.world.name)}, "
        f"{tl.n_days} of {tl.run.world.horizon_days} days, final net assets {money(tl.run.final_net_assets)}"
        f"{'' if meta.get('finished', True) else ' (unfinished run)'}"
    )
    first = day_html(tl.day(shown)) if tl.n_days else "<p>no day settled yet</p>"
    return (
        f'<section class="run" data-run="{index}" data-days="{tl.n_days}"><h2>{esc(run.label)}</h2>'
        f'<p class="facts">{facts}</p>{chart}<div class="day">{first}</div></section>'
    )


def last_day(runs: Sequence[ReplayRun]) -> int:
    """The slider's last day: the longest run's days settled (1 when none is settled)."""
    return max((r.timeline.n_days for r in runs), default=1) or 1


def chosen_day(runs: Sequence[ReplayRun], asked: str | None) -> int:
    """The day a page opens on: `?day=N` kept within 1..last day, the last day when absent or not a number."""
    days = last_day(runs)
    try:
        return min(max(int(asked or ""), 1), days)
    except ValueError:
        return days


def replay_page(runs: Sequence[ReplayRun], day: int | None = None) -> str:
    """The replay page of `runs`, side by side, with one day slider, on `day` (default: the last)."""
    days = last_day(runs)
    day = days if day is None else min(max(day, 1), days)
    header = (
        f"<h1>AutoVend replay · {esc(', '.join(r.label for r in runs))}</h1>"
        f'<div class="slider"><label for="day">day</label>'
        f'<input type="range" id="day" min="1" max="{days}" value="{day}" step="1">'
        f'<b id="day-label">{day}</b><span class="facts">of {days} (← → keys step a day; the address links '
        "to the day shown)</span></div>"
    )
    cols = f"grid-template-columns: repeat({len(runs)}, minmax(0, 1fr))"
    sections = "".join(run_section(i, r, day) for i, r in enumerate(runs))
    body = f'<div class="runs" data-day="{day}" style="{cols}">{sections}</div>'
    return page("AutoVend replay", header, body, script="replay.js")


def _labels(runs: Sequence[RunData]) -> list[str]:
    """The runs' folder names, made unique with a number where two are alike."""
    names = [r.name for r in runs]
    return [n if names.count(n) == 1 else f"{n} ({i + 1})" for i, n in enumerate(names)]


def replay_app(runs: Sequence[RunData], *, host: str = DEFAULT_HOST, token: str | None = None) -> Starlette:
    """The replay app of loaded runs (see the module docstring), behind `ConsoleGate` for `host` and `token`."""
    items = [ReplayRun(label, Timeline.of(r)) for label, r in zip(_labels(runs), runs, strict=True)]

    def pick(request: Request) -> tuple[Timeline, int] | Json:
        i, d = int(request.path_params["run"]), int(request.path_params["day"])
        if not 0 <= i < len(items):
            return Json({"error": f"there is no run {i}; the runs are 0-{len(items) - 1}"}, status_code=404)
        tl = items[i].timeline
        if not 1 <= d <= tl.n_days:
            return Json({"error": f"run {i} has days 1-{tl.n_days}, not {d}"}, status_code=404)
        return tl, d

    def index(request: Request) -> Html:
        return Html(replay_page(items, chosen_day(items, request.query_params.get("day"))))

    def day_fragment(request: Request) -> Html | Json:
        picked = pick(request)
        if isinstance(picked, Json):
            return picked
        return Html(day_html(picked[0].day(picked[1])))

    def day_json(request: Request) -> Json:
        picked = pick(request)
        if isinstance(picked, Json):
            return picked
        return Json(picked[0].day(picked[1]).to_json())

    def runs_json(request: Request) -> Json:
        out = []
        for i, item in enumerate(items):
            tl = item.timeline
            out.append(
                {
                    "run": i,
                    "label": item.label,
                    "agent": tl.run.agent,
                    "seed": tl.run.seed,
                    "world": tl.run.world.name,
                    "days": tl.n_days,
                    "net_assets": tl.daily["net_assets"].tolist(),
                    "cash": tl.daily["cash"].tolist(),
                    "inventory_at_cost": tl.daily["inventory_at_cost"].tolist(),
                }
            )
        return Json(out)

    routes = [
        Route("/", index),
        Route("/runs/{run:int}/days/{day:int}", day_fragment),
        Route("/api/runs", runs_json),
        Route("/api/runs/{run:int}/days/{day:int}", day_json),
    ]
    return gated_app(routes, host=host, csrf=new_csrf_token(), token=token)

"""The play app: a person runs an episode through the 18 tools, in forms or as JSON, into a run folder.

Routes:

- `GET /`: the page: the rules of the world and how a day goes (`rules`, open until a day is settled), the
  day's prompt, the daily report, today's calls with their results as tables (`results`), the notebook, and
  a form for each tool (`forms`);
- `GET /fragment/state`: the state panel's HTML (the page reloads it after every call);
- `GET /fragment/calls/last`: the last recorded call, its status and its result as tables (the page shows it
  at the top of the left column, where wide tables fit);
- `GET /api/state`: the state as JSON (`PlayState.to_json` plus the date): {"day": n, "days", "settled",
  "finished", "report", "prompt", "notebook", "tool_calls", "metrics", ...};
- `GET /api/tools`: the 18 tools (name, kind, description, input JSON schema);
- `GET /api/csrf`: {"csrf_token", "header"}, the token a `POST` needs (`autovend.console.security`);
- `POST /api/tools/<name>`: the tool's arguments as a JSON object (Content-Type application/json) -> the
  tool's result content, exactly as an agent gets it; the header `X-AutoVend-Tool-Ok` says whether the call
  was accepted (a refused call is a result with "error", status 200, and is recorded like any agent's).
  404 for a name that is no tool; 400 for a body that is not a JSON object or breaks the JSON rules of every
  door (`autovend.tools.guard`: a key twice, NaN, an integer beyond 2^53, over 32 levels, a lone surrogate);
  413 for a body over `MAX_BODY_BYTES` or arguments over 131,072 characters of JSON; 415 for another content
  type (which also keeps other web sites' plain form posts out); 409 once the episode is over. Refused at the
  door, nothing is run or recorded;
- `GET /report`: the run's report.html once the episode is finished; while the run is scored after its last day,
  a page saying so that reloads itself (503 with Retry-After); before that, a page saying when it comes (404).

After the last `end_day` the page shows "Scoring the run and writing the report…" until the run folder is
complete, then the link to report.html. A horizon (`--days`) too short for a delivery is warned of on the page
(`rules.horizon_warning`).

Every request passes `ConsoleGate` first (Host, Origin, the CSRF token of a POST, the bearer token if set).
"""

from __future__ import annotations

from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from autovend.console.episode import EpisodeOver, PlayEpisode, PlayState
from autovend.console.forms import datalists, tool_form
from autovend.console.html import Html, Json, esc, kpis, money, page, script_json, table
from autovend.console.results import call_html, result_html, status
from autovend.console.rules import horizon_warning, prompt_html, rules_html
from autovend.console.security import CSRF_HEADER, gated_app, new_csrf_token
from autovend.console.server import DEFAULT_HOST
from autovend.env import VendingEnv
from autovend.evaluation.rundata import read_calls
from autovend.tools.guard import MAX_TEXT_CHARS, InputError, kind_of, loads

MAX_BODY_BYTES = MAX_TEXT_CHARS  # bytes of a POST body (1 MiB); larger: 413
WAITING_PAGE = (
    '<!doctype html>\n<html lang=en><head><meta charset=utf-8><meta http-equiv="refresh" content="2">'
    "<title>AutoVend · writing the report</title></head><body><p id=scoring>The run is being scored and its "
    'report written; this page reloads every 2 seconds. <a href="./">Back to the console</a>.</p></body></html>\n'
)
NO_REPORT_PAGE = (
    "<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>AutoVend · no report yet</title></head>"
    '<body><p id=no-report>{why}. <a href="./">Back to the console</a>.</p></body></html>\n'
)


def metrics_html(metrics: dict[str, Any], currency: str) -> str:
    """The headline metrics with their definitions (as report.md and report.html show them; money in `currency`)."""
    from autovend.evaluation.definitions import DEFINITIONS, HEADLINE, format_metric, metric_unit

    rows = [
        (label, format_metric(k, metrics.get(k)), metric_unit(k, currency), DEFINITIONS[k])
        for k, (label, _, _, _) in HEADLINE.items()
    ]
    return table(["metric", "value", "unit", "definition"], rows, cls="metrics")


def report_html(report: dict[str, Any], currency: str) -> str:
    """The daily report (the observation the agents get) as tables (money in `currency`)."""
    if not report:
        return "<p>no report</p>"
    parts = []
    for name in ("pnl", "devices"):
        block = report.get(name) or {}
        parts.append(
            f"<h3>{esc(name)}</h3><div class=wide>{table(block.get('columns', []), block.get('rows', []))}</div>"
        )
    wh = report.get("warehouse", {})
    parts.append(f"<h3>warehouse</h3><div class=wide>{table(list(wh), [list(wh.values())])}</div>")
    tr = report.get("in_transit", {})
    parts.append(
        f"<h3>in transit</h3><p>{tr.get('orders', 0)} orders, {tr.get('units', 0):,} units, "
        f"{money(tr.get('value_at_cost', 0.0))} {esc(currency)} at cost</p>"
    )
    if tr.get("arrivals"):
        rows = [[a["day"], a["date"], a["orders"], a["units"]] for a in tr["arrivals"]]
        parts.append(table(["expected day", "date", "orders", "units"], rows))
    if tr.get("delayed"):
        rows = [[d["order_id"], d["sku_id"], d["qty"], d["promised_day"], d["days_late"]] for d in tr["delayed"]]
        parts.append(table(["order", "sku", "units", "promised day", "days late"], rows))
    cal = report.get("calendar", {})
    today = cal.get("today", {})
    special = ", ".join(f"{e['date']} {e['name'] or e['kind']}" for e in cal.get("next_14d", [])) or "none"
    holiday = f" ({esc(today['holiday_name'])})" if today.get("holiday_name") else ""
    parts.append(
        f"<h3>calendar</h3><p>today {'a working day' if today.get('is_workday') else 'a day off'}{holiday}; "
        f"next 14 days: {esc(special)}</p>"
    )
    return "".join(parts)


def head_line(state: PlayState, date: str, currency: str) -> str:
    """The header's status line: day, date, net assets, cash (in `currency`), or the end of the episode."""
    bal = state.snapshot.report.get("balance", {})
    if state.finished:
        where = "the episode is over"
    elif state.scoring:
        where = "the last day is settled: scoring the run and writing the report…"
    elif state.error:
        where = f'<span class="error">stopped: {esc(state.error)}</span>'
    else:
        where = f"day <b id=head-day>{state.day}</b> of {state.days} · {esc(date)}"
    return (
        f"{where} · net assets <b>{money(bal.get('net_assets'))}</b> {esc(currency)} · cash {money(bal.get('cash'))} · "
        f"{state.settled} day{'' if state.settled == 1 else 's'} settled · run folder <code>{esc(state.run_dir)}</code>"
    )


class PlayPage:
    """The pages of one played episode (the app's views hold one of these); `csrf` goes into every page."""

    def __init__(self, episode: PlayEpisode, title: str, csrf: str = "") -> None:
        self.episode = episode
        self.title = title
        self.csrf = csrf
        env = VendingEnv(episode.world)
        self.tools = env.tools()
        self.tool_names = [t["name"] for t in self.tools]
        world = episode.world
        self.currency = world.economics.currency
        self.device_ids = [str(d) for d in world.machines["device_id"]]
        names = world.catalog["name"] if "name" in world.catalog else world.catalog["sku_id"]
        self.skus = [(str(s), str(n)) for s, n in zip(world.catalog["sku_id"], names, strict=True)]

    def date(self, day: int) -> str:
        """The date of simulation day `day`."""
        world = self.episode.world
        return f"{world.date_of(day):%A, %Y-%m-%d}"

    def state_json(self) -> dict[str, Any]:
        """`GET /api/state`."""
        state = self.episode.state()
        return {**state.to_json(), "date": self.episode.world.date_of(state.day).isoformat()}

    def state_html(self) -> str:
        """The state panel: status, the metrics at the end, the balance, the report, today's calls, the notebook."""
        state = self.episode.state()
        bal = state.snapshot.report.get("balance", {})
        parts = [f'<div id="state-head" hidden>{head_line(state, self.date(state.day), self.currency)}</div>']
        parts.append(
            f'<div id="play-status" data-day="{state.day}" data-days="{state.days}" '
            f'data-finished="{str(state.finished).lower()}" data-scoring="{str(state.scoring).lower()}">'
        )
        if state.scoring:
            parts.append(
                f'<h2 id="scoring">Scoring the run and writing the report…</h2><p>All {state.days} days are settled. '
                "The evaluation is computing the metrics and writing metrics.json, report.md and report.html into "
                f"<code>{esc(state.run_dir)}</code>; the link to the report appears here when they are written.</p>"
            )
        elif state.finished:
            written = (state.run_dir / "report.html").exists()
            link = '<a id="report-link" href="report">report.html</a>' if written else "no report.html"
            parts.append(
                f"<h2>The episode is over: {state.settled} days settled</h2><p>The run folder "
                f"<code>{esc(state.run_dir)}</code> holds the trajectory, the records, metrics.json and the reports "
                f"({link}).</p>"
            )
            if state.metrics:
                parts.append(metrics_html(state.metrics, self.currency))
        parts.append("</div>")
        parts.append(
            kpis(
                [
                    ("net_assets", "net assets", money(bal.get("net_assets"))),
                    ("cash", "cash", money(bal.get("cash"))),
                    ("shelf", "on shelves at cost", money(bal.get("shelf"))),
                    ("warehouse", "warehouse at cost", money(bal.get("warehouse"))),
                    ("in_transit", "in transit at cost", money(bal.get("in_transit"))),
                ]
            )
        )
        calls = [c for c in read_calls(state.run_dir / "trajectory.jsonl") if int(c.get("day", 0)) == state.day]
        items = [
            call_html(
                c.get("seq"), str(c.get("tool")), c.get("arguments"), bool(c.get("ok")), c.get("result"), c.get("error")
            )
            for c in reversed(calls)
        ]
        if not state.finished:
            parts.append(prompt_html(state.snapshot.prompt))
        parts.append(
            f'<h2>Today\'s calls ({len(calls)})</h2><div class="calls">{"".join(items) or "<p>none yet</p>"}</div>'
        )
        parts.append(f"<h2>Daily report</h2>{report_html(state.snapshot.report, self.currency)}")
        parts.append(f'<h2>Notebook</h2><pre class="notebook">{esc(state.snapshot.notebook) or "(empty)"}</pre>')
        return "".join(parts)

    def last_call_html(self) -> str:
        """The last recorded call: "tool: status" and its result as tables (`results`); data-status ok or error."""
        calls = read_calls(self.episode.run_dir / "trajectory.jsonl")
        if not calls:
            return '<div class="last-call" data-status="none"><p>no call yet</p></div>'
        c = calls[-1]
        ok, tool = bool(c.get("ok")), str(c.get("tool"))
        text, css = status(ok, c.get("result"))
        return (
            f'<div class="last-call" data-status="{css}" data-tool="{esc(tool)}" data-seq="{esc(c.get("seq"))}">'
            f'<p class="status-line">#{esc(c.get("seq"))} {esc(tool)} on day {esc(c.get("day"))}: '
            f'<span class="{css}">{esc(text)}</span></p>'
            f"{result_html(ok, c.get('result'), c.get('error'))}</div>"
        )

    def page(self) -> str:
        """The whole page."""
        state_panel = self.state_html()
        state = self.episode.state()
        header = (
            f"<h1>{esc(self.title)}</h1><div id=head-line>{head_line(state, self.date(state.day), self.currency)}</div>"
        )
        ordered = [t for t in self.tools if t["name"] == "end_day"] + [t for t in self.tools if t["name"] != "end_day"]
        forms = "".join(tool_form(t) for t in ordered).replace(
            '<details id="tool-end_day">', '<details id="tool-end_day" open>', 1
        )
        schemas = {t["name"]: t["input_schema"] for t in self.tools}
        tools = (
            '<div class="tools"><h2>Tools</h2><p class="facts">The same 18 tools as every agent; fields marked * are '
            "required, empty optional fields are left out. A call's result appears on the left, as tables.</p>"
            f'<p>last call: <span id="result-status" class="status">none</span></p>'
            f"{forms}{datalists(self.device_ids, self.skus)}"
            f'<script type="application/json" id="tool-schemas">{script_json(schemas)}</script></div>'
        )
        if state.finished:
            tools = '<div class="tools"><h2>Tools</h2><p>The episode is over: no tool can be used any more.</p></div>'
        rules = rules_html(self.episode.world, opened=state.settled == 0 and not state.finished)
        warning = horizon_warning(self.episode.world, self.episode.days)
        if warning and not state.finished:
            rules = f'<p class="warn" id="horizon-warning">{esc(warning)}</p>' + rules
        result = '<section id="result-panel" hidden><h2>Result of the last call</h2><div id="result"></div></section>'
        body = (
            f'<div class="play"><div class="left">{rules}{result}<div id="state">{state_panel}</div></div>{tools}</div>'
        )
        meta = f'<meta name="autovend-csrf" content="{esc(self.csrf)}">'
        return page(self.title, header, body, script="play.js", extra_head=meta)


async def read_body(request: Request, limit: int) -> bytes | None:
    """The request's body, or None once it is over `limit` bytes (the rest is not read)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def play_app(
    episode: PlayEpisode, title: str = "AutoVend · play", *, host: str = DEFAULT_HOST, token: str | None = None
) -> Starlette:
    """The play app of a started episode (see the module docstring), behind `ConsoleGate` for `host` and `token`."""
    csrf = new_csrf_token()
    view = PlayPage(episode, title, csrf)

    def index(request: Request) -> Html:
        return Html(view.page())

    def state_fragment(request: Request) -> Html:
        return Html(view.state_html())

    def last_call(request: Request) -> Html:
        return Html(view.last_call_html())

    def state(request: Request) -> Json:
        return Json(view.state_json())

    def tools(request: Request) -> Json:
        return Json(view.tools)

    def csrf_token(request: Request) -> Json:
        return Json({"csrf_token": csrf, "header": CSRF_HEADER})

    async def call(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in view.tool_names:
            known = ", ".join(view.tool_names)
            return Json({"error": f"there is no tool {name!r}; the tools are: {known}"}, status_code=404)
        if not request.headers.get("content-type", "").startswith("application/json"):
            return Json(
                {"error": "send the arguments as a JSON object with Content-Type: application/json"}, status_code=415
            )
        raw = await read_body(request, MAX_BODY_BYTES)
        if raw is None:
            error = f"the body is over {MAX_BODY_BYTES:,} bytes; send less. Nothing was done"
            return Json({"error": error}, status_code=413)
        try:
            args = loads(raw, "the body") if raw.strip() else {}
        except InputError as exc:
            status = 413 if exc.too_large else 400
            return Json({"error": f"{exc}; send the arguments as a JSON object. Nothing was done"}, status)
        if not isinstance(args, dict):
            error = f'the arguments must be a JSON object, got {kind_of(args)}; send them as {{"name": value, ...}}'
            return Json({"error": f"{error}. Nothing was done"}, 400)
        from starlette.concurrency import run_in_threadpool

        try:
            result = await run_in_threadpool(episode.call, name, args)
        except EpisodeOver as exc:
            return Json({"error": str(exc)}, status_code=409)
        headers = {"X-AutoVend-Tool-Ok": "true" if result.ok else "false"}
        return Response(result.text, media_type="application/json", headers=headers)

    def report(request: Request) -> Response:
        path = episode.run_dir / "report.html"
        if episode.finished and path.exists():
            return FileResponse(path, media_type="text/html")
        if episode.scoring:
            return Html(WAITING_PAGE, status_code=503, headers={"Retry-After": "2"})
        if episode.finished:
            why = esc(episode.error or "the run ended without one")
            return Html(NO_REPORT_PAGE.format(why=f"there is no report.html: {why}"), status_code=404)
        state = episode.state()
        why = f"report.html is written when the episode is over; day {state.day} of {state.days} is being played"
        return Html(NO_REPORT_PAGE.format(why=esc(why)), status_code=404)

    routes = [
        Route("/", index),
        Route("/fragment/state", state_fragment),
        Route("/fragment/calls/last", last_call),
        Route("/api/state", state),
        Route("/api/tools", tools),
        Route("/api/csrf", csrf_token),
        Route("/api/tools/{name}", call, methods=["POST"]),
        Route("/report", report),
    ]
    return gated_app(routes, host=host, csrf=csrf, token=token)

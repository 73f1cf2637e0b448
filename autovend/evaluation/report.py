"""report.md, report.html and metrics.json of a run, and the comparison of several runs (table, summary, figures)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from autovend.currency import common_currency, minor_unit
from autovend.evaluation.comparability import Comparability, IncomparableRunsError, check_comparable, short_hash
from autovend.evaluation.comparison import (
    COMPARISON_JSON,
    NORMALISED,
    NORMALISED_LABEL,
    NORMALISED_NOTE,
    agent_ranks,
    comparison_json,
    labelled,
    normalised_scores,
    paired_markdown,
    paired_of,
    references_for,
)
from autovend.evaluation.definitions import FAILURE_LABELS, HEADLINE, format_metric, metric_header, metric_unit
from autovend.evaluation.headroom import run_reference
from autovend.evaluation.metrics import METRICS_VERSION, compute_metrics
from autovend.evaluation.paired import PairedDifference, dumps
from autovend.evaluation.rundata import HTML_REPORT_FILE, METRICS_FILE, REPORT_FILE, RunData
from autovend.evaluation.settings import EvalSettings
from autovend.io import atomic_write_text

RUN_FIGURES = ("net_assets.png", "operations.png", "early_late.png")
COMPARISON_FIGURES = ("net_assets.png", "profile.png", "early_late.png")  # profile.png: two agents or more
PROFILE_SKIPPED = (
    "the radar scores each axis min-max across agents (1 = the best agent), so with a single agent every "
    "axis would read 1 whatever the numbers; see the metrics table instead."
)


def load_metrics(run: RunData, settings: EvalSettings | None = None) -> dict[str, Any]:
    """The run's metrics: its metrics.json when current (same version and settings), else computed afresh."""
    settings = settings or EvalSettings()
    if run.run_dir is not None and (run.run_dir / METRICS_FILE).exists():
        try:
            saved = json.loads((run.run_dir / METRICS_FILE).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            saved = {}
        same = saved.get("details", {}).get("settings") == settings.model_dump(mode="json")
        if saved.get("metrics_version") == METRICS_VERSION and same and saved.get("run", {}).get("days") == run.days:
            return saved
    return compute_metrics(run, settings)


def run_report(run: RunData, metrics: dict[str, Any]) -> str:
    """The markdown report of one run (figures referenced by their file names in the run folder)."""
    meta = run.meta
    det = metrics["details"]
    cur = run.world.economics.currency
    lines = [
        f"# Run {run.name}",
        "",
        f"- agent: **{run.agent}**, seed {run.seed}, config: `{json.dumps(meta.get('agent_config') or {})}`",
        f"- world: {run.world.name} (hash {run.world_hash[:12] or 'not recorded'}), "
        f"days settled: {run.days} of {run.world.horizon_days}",
        f"- code version: {meta.get('code_version', '?')}, wall time: {_seconds(meta.get('wall_time_s'))}",
    ]
    if meta.get("api_cost_usd") is not None:
        lines.append(
            f"- API cost: {float(meta['api_cost_usd']):.4f} USD, tokens: `{json.dumps(meta.get('token_usage'))}`"
        )
    if meta.get("privileged"):
        lines.append(f"- **{PRIVILEGED_NOTE}**")
    lines += ["", "## Metrics", "", "| metric | value | unit |", "|---|---:|---|"]
    for key, (label, _, _, _) in HEADLINE.items():
        lines.append(f"| {label} | {format_metric(key, metrics.get(key))} | {metric_unit(key, cur)} |")
        if key == "net_assets":
            lines.append(f"| {NORMALISED_LABEL} | {_normalised_cell(run)} | (agent − hold) / (oracle − hold) |")
    lines += [
        "",
        f"Start cash {run.start_cash:,.2f} {cur}; net-asset growth {metrics['net_asset_growth']:,.2f} {cur} "
        f"(money in {cur}, to the {minor_unit(cur)}). "
        "Definitions: the docstrings of `autovend.evaluation.metrics`.",
        "",
        "![net assets](net_assets.png)",
        "",
        "![operations](operations.png)",
        "",
        "## Checkpoints (assortment and site coordination)",
        "",
        "| day | assortment score | machines | reassignment gap % | actual | best reassignment |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    coord = {c["day"]: c for c in det["site_coordination"]["checkpoints"]}
    for c in det["assortment"]["checkpoints"]:
        g = coord.get(c["day"], {})
        gap = "–" if g.get("gap") is None else f"{100 * g['gap']:.2f}"
        score = "–" if c["score"] is None else f"{c['score']:.3f}"
        lines.append(f"| {c['day']} | {score} | {c['machines']} | {gap} | {g.get('actual')} | {g.get('best')} |")
    p = det["pricing"]
    lines += ["", "## Pricing", ""]
    if p.get("regret") is None:
        lines.append("No stocked machine-day was sampled.")
    else:
        lines.append(
            f"On {p['machine_days']} sampled machine-days the expected gross profit at the agent's prices is "
            f"{p['expected_gp_agent']:.2f} {cur}, at the best common price level "
            f"({p['mean_best_level']:.2f} x reference on average) {p['expected_gp_best_level']:.2f}, and at the "
            f"searched prices {p['expected_gp_reference']:.2f} (regret {p['regret']:.2f} {cur} per machine-day)."
        )
    e = det["physical_execution"]
    lines += ["", "## Physical execution", ""]
    lines.append(
        f"Availability {format_metric('availability', e.get('availability'))} %; "
        f"{e.get('cycles', 0)} complete visit cycles, "
        f"mean length {_plain(e.get('mean_cycle_days'))} days, gross profit per cycle-day "
        f"{_plain(e.get('cycle_gross_profit_per_day'))} {cur}, return after the visit fee "
        f"{_plain(e.get('cycle_return'))} {cur} per machine per day."
    )
    fb = det["feedback"]
    lines += ["", "## Early and late periods", "", "| period | asset growth | gross profit | costs | visits |"]
    lines.append("|---|---:|---:|---:|---:|")
    for period in ("early", "late"):
        row = fb.get(period)
        if row:
            lines.append(
                f"| {period} | {row['asset_growth']:.2f} | {row['gross_profit']:.2f} | {row['costs']:.2f} | "
                f"{row['visits']:.2f} |"
            )
        else:
            lines.append(f"| {period} | – | – | – | – |")
    lines += ["", f"Per day, {cur} (visits: machines per day).", "", "![early and late](early_late.png)", ""]
    lines += ["## Failure modes", "", "| failure mode | count | examples |", "|---|---:|---|"]
    for name, f in metrics["failures"].items():
        ex = "; ".join(_example(x) for x in f["examples"]) or "–"
        lines.append(f"| {FAILURE_LABELS.get(name, name)} | {f['count']} | {ex} |")
    return "\n".join(lines + ledger_lines(det["totals"], run.world.made_to_order))


def ledger_lines(t: dict[str, Any], made_to_order: bool) -> list[str]:
    """The ledger totals table; a made-to-order world's has no fines and expiry columns (nothing expires)."""
    cols = [
        ("revenue", "revenue", "{:,.2f}"),
        ("gross profit", "gross_profit", "{:,.2f}"),
        ("units sold", "units_sold", "{:,.0f}"),
        ("purchases", "purchase", "{:,.2f}"),
        ("rent", "warehouse_rent", "{:,.2f}"),
        ("daily fee", "daily_fee", "{:,.2f}"),
        ("visits", "visit", "{:,.2f}"),
        ("fines", "expired_fine", "{:,.2f}"),
        ("expiry", "expiry_writeoff", "{:,.2f}"),
        ("discard", "discard_writeoff", "{:,.2f}"),
    ]
    if made_to_order:
        cols = [c for c in cols if c[1] not in ("expired_fine", "expiry_writeoff")]
    head = ["", "## Ledger totals", ""]
    if made_to_order:
        head += ["Made to order: a unit is one serving's ingredients; nothing expires, so no fines and no expiry.", ""]
    return [
        *head,
        "| " + " | ".join(c[0] for c in cols) + " |",
        "|" + "---:|" * len(cols),
        "| " + " | ".join(fmt.format(t[key]) for _, key, fmt in cols) + " |",
        "",
    ]


def _plain(x: Any) -> str:
    return "–" if x is None else f"{float(x):.2f}"


def _seconds(x: Any) -> str:
    return "–" if x is None else f"{float(x):.1f} s"


def _example(x: dict[str, Any]) -> str:
    return "day " + str(x.get("day")) + ": " + ", ".join(f"{k}={v}" for k, v in x.items() if k != "day")


def run_output_texts(run: RunData, settings: EvalSettings | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """The metrics of `run` and the texts of metrics.json, report.md and report.html that `write_run_outputs` writes.

    `autovend verify` regenerates them from the replayed run and compares them with the folder's.
    """
    from autovend.evaluation.htmlreport import run_html
    from autovend.evaluation.htmlreport.scorecard import NormalisedScore

    metrics = compute_metrics(run, settings)
    ref = run_reference(run)
    score = None if ref is None else ref.score(run.final_net_assets)
    normalised = None if ref is None or score is None else NormalisedScore(score, ref.hold, ref.oracle)
    texts = {
        METRICS_FILE: json.dumps(metrics, indent=2, ensure_ascii=False) + "\n",
        REPORT_FILE: run_report(run, metrics),
        HTML_REPORT_FILE: run_html(run, metrics, settings, normalised),
    }
    return metrics, texts


def write_run_outputs(
    run: RunData, out_dir: str | Path | None = None, settings: EvalSettings | None = None
) -> dict[str, Any]:
    """Compute the metrics and write metrics.json, report.md, report.html and the run's figures; return the metrics.

    `out_dir` defaults to the run's folder. report.md and report.html's scorecard show the normalised score when
    the world's manifest holds the oracle's figure for the run's seed (`headroom.run_reference`).
    """
    from autovend.evaluation.figures import early_late_figure, net_assets_figure, operations_figure

    target = Path(out_dir) if out_dir is not None else run.run_dir
    if target is None:
        raise ValueError("the run was built in memory: give out_dir")
    target.mkdir(parents=True, exist_ok=True)
    metrics, texts = run_output_texts(run, settings)
    cur = run.world.economics.currency
    net_assets_figure([run], target / "net_assets.png", currency=cur)
    operations_figure(run, target / "operations.png")
    early_late_figure([metrics], [run.agent], target / "early_late.png", currency=cur)
    for name, text in texts.items():
        atomic_write_text(target / name, text)
    return metrics


COMPARE_COLUMNS = ["run", "agent", "seed", "days", "world_hash", *HEADLINE, *FAILURE_LABELS]


def compare(
    runs: Sequence[RunData],
    settings: EvalSettings | None = None,
    metrics: Sequence[dict[str, Any]] | None = None,
) -> pd.DataFrame:
    """One row per run: name, agent, seed, days, world hash, the headline metrics (stored units) and failure counts.

    `metrics` (one dict per run) skips loading or computing them.
    """
    if metrics is None:
        metrics = [load_metrics(r, settings) for r in runs]
    rows = []
    for run, m in zip(runs, metrics, strict=True):
        row: dict[str, Any] = {"run": run.name, "agent": run.agent, "seed": run.seed, "days": run.days}
        row["world_hash"] = run.world_hash
        row.update({k: m.get(k) for k in HEADLINE})
        row.update({k: m.get("failure_counts", {}).get(k) for k in FAILURE_LABELS})
        rows.append(row)
    return pd.DataFrame(rows, columns=COMPARE_COLUMNS)


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Per agent: the number of runs and the mean of every metric.

    Net assets also get their sample standard deviation (ddof 1; NaN for a single run) and CV.
    """
    metrics = [c for c in (*HEADLINE, NORMALISED, *FAILURE_LABELS) if c in table]
    num = table[["agent", *metrics]].copy()
    for c in metrics:
        num[c] = pd.to_numeric(num[c], errors="coerce")
    g = num.groupby("agent", sort=False)
    out = g[metrics].mean()
    out.insert(0, "runs", g.size())
    std = g["net_assets"].std(ddof=1)
    out.insert(2, "net_assets_std", std)
    out.insert(3, "net_assets_cv", std / out["net_assets"])
    return out


PRIVILEGED_NOTE = (
    "privileged reference policy: it reads the hidden demand model no agent may read (a headroom bound, not an entry)"
)


def _normalised_cell(run: RunData) -> str:
    """The run's normalised score with its references, from the world's manifest ("–" and why when there is none)."""
    ref = run_reference(run)
    if ref is None:
        return "– (no oracle reference for this world and seed here; `autovend compare` computes one)"
    score = ref.score(run.final_net_assets)
    shown = "–" if score is None else f"{score:.3f}"
    return f"{shown} (hold {ref.hold:,.2f}, oracle {ref.oracle:,.2f})"


def _header(key: str, currency: str, unit: bool = True) -> str:
    if key == NORMALISED:
        return NORMALISED_LABEL
    return metric_header(key, currency) if unit else HEADLINE[key][0]


def _shown(key: str, value: Any) -> str:
    if key != NORMALISED:
        return format_metric(key, value)
    return f"{float(value):.3f}" if value is not None and np.isfinite(value) else "–"


def comparison_markdown(
    table: pd.DataFrame,
    summary: pd.DataFrame,
    check: Comparability | None = None,
    paired: Sequence[PairedDifference] | None = None,
    settings: dict[str, str] | None = None,
    currency: str = "",
) -> str:
    """The comparison as markdown: caveats (`check`), per-agent summary (mean ± std), then one row per run.

    With `paired` (`comparison.paired_of`): each agent's rank (shared where the paired interval of net assets
    does not tell agents apart) and the paired differences after the summary. `settings`: what tells the
    configurations of one agent name apart, by label (`comparison.labelled`). `currency`: the runs' worlds'
    (`common_currency`), named in the units.
    """
    currency = currency or common_currency([])
    from autovend.evaluation.figures import MIN_PROFILE_ROWS

    comparable = check is None or check.comparable
    rank = agent_ranks(table, paired) if paired is not None and comparable and len(summary) > 1 else {}
    keys = [k for k in HEADLINE if k in summary]
    if NORMALISED in summary and summary[NORMALISED].notna().any():
        keys.insert(keys.index("net_assets") + 1 if "net_assets" in keys else 0, NORMALISED)
    lines = ["# Comparison of runs", ""]
    if check is not None and check.refusals:
        lines += ["## Compared with --force although they are not comparable", ""]
        lines += [f"- {r}" for r in check.refusals] + [""]
    if check is not None and check.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in check.notes] + [""]
    lines += ["## By agent (mean over runs; net assets ± sample std, CV)", ""]
    if rank:
        lines += [
            "Rank by mean net assets; agents share a rank where the paired 95% interval does not tell them apart.",
            "",
        ]
    if NORMALISED in keys:
        lines += [f"{NORMALISED_LABEL}: {NORMALISED_NOTE} (references in comparison.json).", ""]
    ranked = "| rank " if rank else ""
    lines.append(f"{ranked}| agent | runs | " + " | ".join(_header(k, currency) for k in keys) + " |")
    lines.append(("|---:" if rank else "") + "|---|---:|" + "---:|" * len(keys))
    for agent, row in summary.iterrows():
        cells = []
        for k in keys:
            cell = _shown(k, row[k])
            if k == "net_assets" and np.isfinite(row["net_assets_std"]):
                cell += f" ± {format_metric(k, row['net_assets_std'])} (CV {100 * row['net_assets_cv']:.1f}%)"
            cells.append(cell)
        first = f"| {rank.get(str(agent), '–')} " if rank else ""
        lines.append(f"{first}| {agent} | {int(row['runs'])} | " + " | ".join(cells) + " |")
    lines.append("")
    if settings:
        lines += ["One agent ran with several configurations; each is an agent here:", ""]
        lines += [f"- {label}: {text}" for label, text in settings.items()] + [""]
    if paired is not None:
        lines += paired_markdown(paired, comparable, currency)
    lines += ["## Runs", ""]
    lines.append(
        "| run | agent | seed | days | world | " + " | ".join(_header(k, currency, unit=False) for k in keys) + " |"
    )
    lines.append("|---|---|---:|---:|---|" + "---:|" * len(keys))
    for r in table.itertuples(index=False):
        d = r._asdict()
        lines.append(
            f"| {d['run']} | {d['agent']} | {d['seed']} | {d['days']} | {short_hash(str(d['world_hash'] or ''))} | "
            + " | ".join(_shown(k, d[k]) for k in keys)
            + " |"
        )
    fails = [k for k in FAILURE_LABELS if k in table]
    lines += [
        "",
        "## Failure modes (counts per run)",
        "",
        "| run | " + " | ".join(FAILURE_LABELS[k] for k in fails) + " |",
    ]
    lines.append("|---|" + "---:|" * len(fails))
    for r in table.itertuples(index=False):
        d = r._asdict()
        lines.append(f"| {d['run']} | " + " | ".join(str(d[k]) for k in fails) + " |")
    lines += ["", "![net assets](net_assets.png)", ""]
    if len(summary) >= MIN_PROFILE_ROWS:
        lines += ["![profile](profile.png)", ""]
    else:
        lines += [f"No profile radar: {PROFILE_SKIPPED}", ""]
    lines.append("![early and late](early_late.png)")
    return "\n".join(lines) + "\n"


def write_comparison(
    runs: Sequence[RunData],
    out_dir: str | Path,
    settings: EvalSettings | None = None,
    *,
    force: bool = False,
    compute_references: bool = True,
    on_reference: Callable[[int, int], None] | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write comparison.md, comparison.csv, comparison.json, report.html and the figures; return (table, summary).

    One agent name run with several configurations counts as several agents (`comparison.labelled`);
    comparison.json and comparison.md pair the agents seed by seed (`comparison.paired_of`) and give each run's
    normalised score (`comparison.references_for`; `compute_references`: run the oracle in memory where no
    reference is known; `on_reference(seed, days)` is called before each). The profile radar (profile.png) ranks
    agents against each other and is drawn only for two agents or more. Raises `IncomparableRunsError` (before
    writing anything) for runs that must not be compared (`check_comparable`: different worlds or lengths, a run
    given twice) unless `force`; a forced comparison lists the reasons at the top of comparison.md, as it lists
    the notes.
    """
    from autovend.evaluation.figures import MIN_PROFILE_ROWS, early_late_figure, net_assets_figure, profile_figure
    from autovend.evaluation.htmlreport import write_comparison_html

    check = check_comparable(runs)
    if not check.comparable and not force:
        raise IncomparableRunsError(check.explain() + "\n(pass --force, or force=True, to compare them anyway)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    refs = references_for(
        runs, compute_references, on_reference
    )  # before relabelling: the oracle's runs are found by name
    runs, settings_of = labelled(runs)
    metrics = [load_metrics(r, settings) for r in runs]
    table = compare(runs, settings, metrics)
    table[NORMALISED] = normalised_scores(runs, refs)
    summary = summarize(table)
    paired = paired_of(table) if check.comparable else []
    cur = common_currency(r.world.economics.currency for r in runs)
    net_assets_figure(runs, out / "net_assets.png", currency=cur)
    if len(summary) >= MIN_PROFILE_ROWS:
        profile_figure(summary, out / "profile.png")
    early_late_figure(metrics, [r.agent for r in runs], out / "early_late.png", currency=cur)
    table.to_csv(out / "comparison.csv", index=False)
    atomic_write_text(out / "comparison.md", comparison_markdown(table, summary, check, paired, settings_of, cur))
    content = comparison_json(table, summary, paired, check.comparable, settings_of, refs)
    atomic_write_text(out / COMPARISON_JSON, dumps(content))
    write_comparison_html(runs, table, summary, check, out / HTML_REPORT_FILE, out)
    return table, summary

"""validation.md: the verdict first, then every metric with its interval, the comparisons, the level rule.

Written from the three JSON payloads (metrics, verdict, provenance) as they are written to disk, so the
page says exactly what the files hold. A missing value is "–".
"""

from __future__ import annotations

import math
from typing import Any

from autovend.marks import counted
from autovend.validation.bootstrap import COMPARED, MIN_MACHINES
from autovend.validation.controls import CONTROLS
from autovend.validation.verdict import REFERENCES, headline

MISSING = "–"
# The paper's held-out results (§3.3, Figure 3), on 67 machines with inventory shelves.
PAPER = {
    "volume_error": "within 0.7%",
    "wape": "0.473",
    "tvd": "0.153",
    "spearman": "0.577",
}
PAPER_REFERENCES = {"persistence": {"wape": "0.561"}, "naive": {"wape": "0.606", "tvd": "0.206"}}
METRIC_NAMES = {
    "volume_error": "total volume error",
    "wape": "machine-week WAPE",
    "tvd": "subcategory TVD",
    "spearman": "median within-machine Spearman",
    "wape_product": "product-level WAPE (machine x product, whole window)",
    "crps": "machine-week CRPS / realised units",
}
CONTROL_TEXT = {
    "reversed_popularity": "popularity reversed by rank (the best seller made the worst)",
    "shuffled_popularity": "popularity shuffled within each subcategory",
    "flat_machine_scale": "one scale for every machine (network total kept)",
    "uniform_popularity": "equal popularity for every product",
    "no_shock": "no persistent demand shock",
}
VARIANT_TEXT = {
    "model_without_level": "the model at its calibrated level (without the level rule)",
    "sales_rule_upper_bound": "the model on the sales rule's shelves built from the window's own sales: an upper "
    "bound that knows which products sold, never a forecast",
    "paper_protocol": "the paper's protocol: the model on shelves reconstructed from the counts less the window's own "
    "realised sales, sales capped at them; it knows what sold, so it is never a forecast or in the verdict",
}


def num(v: Any, pct: bool = False, sign: bool = False) -> str:
    """A number for the page (– when missing or not finite)."""
    if v is None or not isinstance(v, int | float) or not math.isfinite(v):
        return MISSING
    if pct:
        return f"{v:+.1%}"
    return f"{v:+.3f}" if sign else f"{v:.3f}"


def _share(v: Any) -> str:
    return f"{v:.1%}" if isinstance(v, int | float) and math.isfinite(v) else MISSING


def _ci(m: dict[str, Any], key: str) -> str:
    ci = m.get("intervals", {}).get(key, {})
    pct = key == "volume_error"
    lo, hi = num(ci.get("low"), pct), num(ci.get("high"), pct)
    return MISSING if MISSING in (lo, hi) else f"[{lo}, {hi}]"


def _seed(m: dict[str, Any], key: str) -> str:
    sp = m.get("seed_spread", {}).get(key)
    if not sp:
        return ""
    if key == "volume_error":
        return f"{num(sp['mean'], pct=True)} ± {sp['sd']:.1%}" if sp["sd"] is not None else MISSING
    return f"{num(sp['mean'])} ± {num(sp['sd'])}"


def _metric_table(m: dict[str, Any]) -> list[str]:
    lines = [
        "| metric | model | 95% interval | per seed | persistence | naive | paper (model; persistence, naive) |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, label in METRIC_NAMES.items():
        pct = key == "volume_error"
        refs = [num(m[r].get(key), pct) for r in REFERENCES]
        paper_refs = ", ".join(PAPER_REFERENCES[r].get(key, MISSING) for r in REFERENCES)
        paper = f"{PAPER.get(key, MISSING)}; {paper_refs}" if key in PAPER else ""
        lines.append(
            f"| {label} | {num(m.get(key), pct)} | {_ci(m, key)} | {_seed(m, key)} | {refs[0]} | {refs[1]} | {paper} |"
        )
    return lines


def _comparison_table(verdict: dict[str, Any]) -> list[str]:
    cells: dict[tuple[str, str], str] = {}
    word = {True: "**better**", False: "**worse**", None: "n.d."}
    for c in verdict["comparisons"]:
        lo, hi = num(c["ci_low"], sign=True), num(c["ci_high"], sign=True)
        cells[(c["against"], c["metric"])] = f"{num(c['difference'], sign=True)} [{lo}, {hi}] {word[c['better']]}"
    lines = ["| model against | " + " | ".join(COMPARED) + " |", "|---|" + "---|" * len(COMPARED)]
    for other in (*REFERENCES, *CONTROLS):
        row = [cells.get((other, k), "equal by construction") for k in COMPARED]
        lines.append(f"| {other} | " + " | ".join(row) + " |")
    return lines


def _controls_section(m: dict[str, Any], verdict: dict[str, Any]) -> list[str]:
    lines = [
        "## Controls and power",
        "",
        "Each control is the fitted model with one component made wrong, replayed on the same shelves with the "
        "same seeds; the popularity controls keep every machine-day's expected total, so only the product split "
        "changes. A control is rejected on a metric when the model is better there with the interval excluding "
        "zero. What the data could reject is this validation's power:",
        "",
    ]
    for name in CONTROLS:
        on = verdict["rejected_controls"].get(name, [])
        what = f"rejected on {', '.join(on)}" if on else "**not rejected on any metric**"
        lines.append(f"- `{name}` ({CONTROL_TEXT[name]}): {what}.")
    lines += ["", "| control | " + " | ".join(METRIC_NAMES) + " |", "|---|" + "---|" * len(METRIC_NAMES)]
    for name, vals in m["controls"].items():
        lines.append(f"| {name} | " + " | ".join(num(vals.get(k), k == "volume_error") for k in METRIC_NAMES) + " |")
    return lines + [""]


def _level_section(m: dict[str, Any], verdict: dict[str, Any]) -> list[str]:
    lv = m.get("level", {})
    lines = ["## Level", ""]
    if "alpha" in lv:
        follows = (lv["alpha"] or 0) > 0
        rule = (
            f"follows the last {lv['weeks']:.0f} training weeks with alpha = {lv['alpha']:g}"
            if follows
            else "keeps the calibrated level (alpha = 0)"
        )
        lines.append(
            "Backtests inside the training period (rolling origins, machine-week WAPE, one-standard-error rule; "
            f"table in `plots/level_backtest.csv`) chose a level rule that {rule}. In the last four training weeks "
            f"the machines sold {num(lv.get('network_ratio'))} times their long-run level; "
            f"{lv.get('machines_up', 0):.0f} machines were at least 25% above it and "
            f"{lv.get('machines_down', 0):.0f} at least 20% below."
        )
    else:
        lines.append("The level rule is off (`level: off`): the model keeps its calibrated level.")
    to_train, to_recent = lv.get("window_vs_training"), lv.get("window_vs_recent")
    lines += [
        "",
        f"After the fact (the forecast never sees this): the window sold {num(to_train)} times the evaluated "
        f"machines' training mean and {num(to_recent)} times their level in the last training weeks.",
    ]
    persist = next((c for c in verdict["comparisons"] if c["against"] == "persistence" and c["metric"] == "wape"), None)
    if persist is not None and persist["better"] is not True and to_train is not None and abs(to_train - 1) > 0.1:
        side = "below" if to_train < 1 else "above"
        lines.append(
            f"The model does not beat persistence on WAPE because the window's level is {abs(to_train - 1):.0%} "
            f"{side} the training mean: a level shift that a model calibrated on the whole training period does "
            "not follow, and that the backtests inside training did not show strongly enough to follow."
        )
    return lines + [""]


def _variants_section(m: dict[str, Any]) -> list[str]:
    variants = m.get("variants") or {}
    if not variants:
        return []
    lines = ["## Variants (never part of the verdict)", ""]
    lines += ["| variant | " + " | ".join(METRIC_NAMES) + " |", "|---|" + "---|" * len(METRIC_NAMES)]
    for name, vals in variants.items():
        lines.append(f"| {name} | " + " | ".join(num(vals.get(k), k == "volume_error") for k in METRIC_NAMES) + " |")
    lines.append("")
    lines += [f"- `{name}`: {VARIANT_TEXT.get(name, name)}." for name in variants]
    return lines + [""]


def _estimators_section(m: dict[str, Any]) -> list[str]:
    est = m.get("estimators") or {}
    if len(est) < 2:
        return []
    lines = [
        "## Estimators on the same held-out weeks",
        "",
        "The training window calibrated with each estimator (`autovend calibrate --estimator`): structural (the "
        "default) and paper (the paper's definitions), each replayed on the same shelves with the same seeds and "
        "level rule.",
        "",
        "| estimator | u | x | e | r | volume error | WAPE | TVD | Spearman | product WAPE |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, v in est.items():
        scal = " | ".join(f"{v[k]:.4g}" if isinstance(v.get(k), float) else MISSING for k in ("u", "x", "e", "r"))
        lines.append(
            f"| {name} | {scal} | {num(v.get('volume_error'), pct=True)} | {num(v.get('wape'))} | {num(v.get('tvd'))} "
            f"| {num(v.get('spearman'))} | {num(v.get('wape_product'))} |"
        )
    return lines + [""]


FEW_MACHINES = 20


def _few_machines(m: dict[str, Any], verdict: dict[str, Any]) -> list[str]:
    n = m["n_machines"]
    if n >= FEW_MACHINES:
        return []
    weeks = verdict.get("resampling")
    machines = counted(n, "machine")
    if n < MIN_MACHINES and weeks is not None and weeks["resamples"]:
        these = "this machine" if n == 1 else "these machines"
        return [
            f"With {machines} there is no machine-cluster bootstrap (it needs at least {MIN_MACHINES}): the intervals "
            f"come from a circular block bootstrap over the {weeks['n_weeks']} test weeks in blocks of "
            f"{weeks['block_weeks']} weeks (round(W^(1/3))), {weeks['resamples']} resamples, the machines held "
            f"together. They say how the scores would move over other weeks of {these}, not how another machine "
            "would score. Neighbouring weeks of a machine are dependent and the window holds few blocks, so they are "
            f"weaker evidence than a machine bootstrap's; still, with {machines} the sign-flip test over machines "
            f"cannot reach p < 0.05 (its smallest p is {2.0**-n:.3g}), so each comparison is decided by its "
            "week-bootstrap interval alone.",
            "",
        ]
    if n < MIN_MACHINES:
        w = f" and {weeks['n_weeks']} test weeks" if weeks is not None else ""
        why = f", the block bootstrap over weeks at least {weeks['min_weeks']}" if weeks is not None else ""
        return [
            f"With {machines}{w} no interval is computed (the machine-cluster bootstrap needs at least "
            f"{MIN_MACHINES} machines{why}), so no comparison is a result.",
            "",
        ]
    return [
        f"With {m['n_machines']} machines the bootstrap has few distinct resamples: its intervals are rough and "
        "tend to be too narrow (a percentile bootstrap over n clusters understates the spread by about "
        "sqrt((n - 1) / n) and more in the tails); read a 'better' or 'worse' near zero with care.",
        "",
    ]


def _intervals_are(m: dict[str, Any], verdict: dict[str, Any]) -> str:
    weeks = verdict.get("resampling")
    if weeks is None:
        return f"intervals are 95% machine-cluster bootstrap intervals ({m['bootstrap']} resamples of whole machines)"
    if not weeks["resamples"]:
        return "there are no intervals (too few machines and test weeks to resample)"
    return (
        f"intervals are 95% circular block bootstrap intervals over weeks ({weeks['resamples']} resamples of the "
        f"{weeks['n_weeks']} test weeks in blocks of {weeks['block_weeks']}, every machine in each drawn week)"
    )


def render_markdown(
    metrics: dict[str, Any], verdict: dict[str, Any], prov: dict[str, Any], source_name: str, limits: str = ""
) -> str:
    """The whole page."""
    m = metrics
    lines = [f"# Held-out validation: {source_name}", "", *headline(verdict), ""]
    lines += [
        f"Shelves: **{prov['shelves']}**, {prov['shelf_rule']}. Test window {prov['test_start']} to "
        f"{prov['test_end']} ({m['test_weeks']} weeks), {counted(m['n_machines'], 'machine')} ({m['n_machine_weeks']} "
        f"machine-weeks, {m['n_pairs']} machine x product pairs), {m['seeds']} replay seeds. Every data-derived "
        f"parameter was re-estimated on the records before the window (u = {m['train']['u']:.4g} "
        f"({prov['u_source']}), r = {m['train']['r']:.3g}, rho = {m['train']['rho']:.3g}); the replay runs at "
        "reference prices and neutral weather (the calendar applies). Point metrics score the forecast averaged "
        f"over the seeds; {_intervals_are(m, verdict)}; 'per seed' is the mean ± sd of one seed's metric. "
        f"Products on the forecast shelves sold {_share(m.get('assortment_coverage'))} of the window's units.",
        "",
        *_few_machines(m, verdict),
        "Verdict rule: " + verdict["rule"] + ".",
        "",
        *_metric_table(m),
        "",
        f"Realised units in the window: {m['units_realised']:,.0f}; forecast (mean over seeds): "
        f"{m['units_simulated']:,.0f}. The paper's numbers come from inventory shelves of a real operator.",
        "",
        "## The model against each reference and control",
        "",
        "Model minus other, with the 95% interval of the paired difference; lower is better but for the Spearman. "
        "**better** / **worse**: the interval excludes zero; n.d.: not distinguishable.",
        "",
        *_comparison_table(verdict),
        "",
    ]
    lines += _controls_section(m, verdict)
    lines += _level_section(m, verdict)
    lines += _variants_section(m)
    lines += _estimators_section(m)
    missing = prov.get("not_computed") or {}
    if missing:
        lines += ["## Not computed", ""] + [f"- `{k}`: {v}" for k, v in sorted(missing.items())] + [""]
    if limits:
        lines += ["## What limits these numbers", "", limits, ""]
    if prov.get("notes"):
        lines += ["## Notes", ""] + [f"- {n}" for n in prov["notes"]] + [""]
    lines += [
        "## Figures",
        "",
        "![weekly](weekly.png)",
        "",
        "![subcategory](subcategory.png)",
        "",
        "![comparisons](comparisons.png)",
        "",
        "Figures are drawn from `plots/*.csv` alone: `autovend validate --figures-only DIR` redraws them. "
        "`metrics.json` holds numbers only; the verdict and every comparison are in `verdict.json`, the window, "
        "hashes and notes in `provenance.json`.",
        "",
    ]
    return "\n".join(lines)

"""The validation's verdict, made only of comparisons whose 95% interval excludes zero.

The model is compared with each reference and each control on each metric (`bootstrap.COMPARED`), the
difference model - other over the same machine-cluster resamples. The verdict:

- `validated`: the model is better than the persistence and the naive references on machine-week WAPE and
  better than product-level persistence (each pair's own recent sales) and reversed popularity on the
  product-level WAPE, each interval excluding zero; a model calibrated on another operator passes the reversed
  control, not persistence's own product mix;
- `worse_than_reference`: one of those four comparisons is significantly in the other's favour;
- `not_distinguishable`: anything else (the data cannot tell the model from one of them).

With fewer than 20 machines a percentile bootstrap over so few clusters is too narrow, so each comparison also
gets an exact randomization test (`bootstrap.sign_flip_p`: the per-machine differences' signs flipped, all 2^M
ways up to 16 machines), and a side is taken only when its one-sided p is below 0.05 too. With M machines the
smallest p is 2^-M: 5 machines cannot go below 0.031, 4 machines not below 0.05, so a source of 4 or fewer
machines can never be validated (the report says so).

A control is rejected on a metric when the model is better there with the interval excluding zero: the
list of what the data could reject is the validation's power.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any, Literal

from autovend.validation.bootstrap import COMPARED, EXACT_BELOW, TEST_LEVEL, Comparison, Scorer
from autovend.validation.controls import CONTROLS, EQUAL_BY_CONSTRUCTION

REFERENCES = ("persistence", "naive")
PRODUCT_METRIC = "wape_product"
KEY_COMPARISONS = (
    ("persistence", "wape"),
    ("naive", "wape"),
    ("persistence", PRODUCT_METRIC),
    ("reversed_popularity", PRODUCT_METRIC),
)
Verdict = Literal["validated", "not_distinguishable", "worse_than_reference"]
Shelves = Literal["inventory", "pre_window", "mixed"]
VERDICT_RULE = (
    "validated: better than the persistence and naive references on machine-week WAPE and than product-level "
    "persistence and reversed popularity on product-level WAPE, each with its 95% machine-cluster bootstrap "
    "interval of the difference excluding zero (and, with fewer than 20 machines, the exact sign-flip test's "
    "one-sided p below 0.05); worse_than_reference: one of those comparisons decided in the other's favour; "
    "not_distinguishable: otherwise"
)


def comparisons(scorer: Scorer, model: str, others: tuple[str, ...]) -> list[Comparison]:
    """The model against each of `others` on each compared metric (but those equal by construction)."""
    return [
        scorer.compare(model, other, metric)
        for other in others
        for metric in COMPARED
        if (other, metric) not in EQUAL_BY_CONSTRUCTION
    ]


def decide(comps: list[Comparison]) -> Verdict:
    """The verdict from the key comparisons (module docstring)."""
    key = {(c.against, c.metric): c.better for c in comps}
    outcomes = [key.get(k) for k in KEY_COMPARISONS]
    if any(o is False for o in outcomes):
        return "worse_than_reference"
    if all(o is True for o in outcomes):
        return "validated"
    return "not_distinguishable"


def rejected(comps: list[Comparison]) -> dict[str, list[str]]:
    """Per control, the metrics on which the data rejected it (the model better, interval excluding zero)."""
    out: dict[str, list[str]] = {c: [] for c in CONTROLS}
    for c in comps:
        if c.against in out and c.better is True:
            out[c.against].append(c.metric)
    return out


def verdict_payload(comps: list[Comparison], shelves: Shelves, n_machines: int, n_boot: int) -> dict[str, Any]:
    """verdict.json: the verdict, the shelves, and every comparison with its interval (and p below 20 machines)."""
    exact = (
        f"; with {n_machines} machines each comparison also has the exact sign-flip test's one-sided p "
        f"(the smallest possible: 2^-{n_machines} = {2.0**-n_machines:.3g})"
        if n_machines < EXACT_BELOW
        else ""
    )
    return {
        "verdict": decide(comps),
        "shelves": shelves,
        "rule": VERDICT_RULE,
        "too_few_machines": bool(n_machines < EXACT_BELOW and 2.0**-n_machines >= TEST_LEVEL),
        "interval": f"95% percentile interval over {n_boot} machine-cluster bootstrap resamples "
        f"of {n_machines} machines{exact}",
        "rejected_controls": {k: v for k, v in rejected(comps).items() if v},
        "not_rejected_controls": [k for k, v in rejected(comps).items() if not v],
        "comparisons": [asdict(c) for c in comps],
    }


def _pct(c: dict[str, Any]) -> str:
    return f"{c['difference']:+.3f} [{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]"


def headline(verdict: dict[str, Any]) -> list[str]:
    """Sentences for the first lines of a report: the verdict, its key intervals, and what it cannot reject."""
    v = verdict["verdict"]
    comps = {(c["against"], c["metric"]): c for c in verdict["comparisons"]}
    words = {
        "validated": "**Validated**",
        "not_distinguishable": "**Not distinguishable**",
        "worse_than_reference": "**Worse than a reference**",
    }
    parts = []
    for against, metric in KEY_COMPARISONS:
        c = comps.get((against, metric))
        if c is None:
            parts.append(f"{metric} against {against}: not compared")
            continue
        if not all(isinstance(c[k], float) and math.isfinite(c[k]) for k in ("ci_low", "ci_high")):
            diff = c["difference"]
            shown = f"{diff:+.3f}" if isinstance(diff, float) and math.isfinite(diff) else "not computed"
            parts.append(f"{metric} against {against} {shown} (no interval)")
            continue
        side = {True: "better", False: "worse", None: "not distinguishable"}[c["better"]]
        p = c.get("p_value")
        shown_p = f", sign-flip p = {p:.3g}" if isinstance(p, float) and math.isfinite(p) else ""
        parts.append(f"{metric} against {against} {_pct(c)} ({side}{shown_p})")
    lines = [f"{words[v]}: " + "; ".join(parts) + " (model - other, 95% interval)."]
    if verdict.get("too_few_machines"):
        lines.append(
            "**Too few machines to decide**: the exact sign-flip test cannot reach p < 0.05 with so few machines "
            "(its smallest p is 2^-M), so no comparison can be called better or worse."
        )
    rev = comps.get(("reversed_popularity", PRODUCT_METRIC))
    if rev is None or rev["better"] is not True:
        lines.append(
            "**This validation cannot reject reversed popularity** on the product-level WAPE: it cannot tell the "
            "fitted product mix from one with the best sellers made the worst."
        )
    not_rej = verdict["not_rejected_controls"]
    if not_rej:
        lines.append("Controls the data could not reject on any metric: " + ", ".join(f"`{c}`" for c in not_rej) + ".")
    return lines

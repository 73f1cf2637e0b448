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
smallest p is 2^-M: 5 machines cannot go below 0.031, 4 machines not below 0.05, so a source of 3 or 4
machines can never be validated (the report says so).

With 1 or 2 machines there is no machine bootstrap and the sign-flip test cannot go below 0.5 or 0.25: the
intervals come from a circular block bootstrap over the test window's weeks (`autovend.validation.weeks`), and
that interval alone decides each comparison (the p is reported, not deciding). It is weaker evidence (weeks of a
machine are dependent, and an 8-week window is 4 blocks) and it speaks for these machines only, not for an
operator's other machines; verdict.json's `rule`, `interval` and `resampling` say so. With fewer than 4 test weeks
there is no interval at all and nothing is decided.

A control is rejected on a metric when the model is better there with the interval excluding zero: the
list of what the data could reject is the validation's power.
"""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any, Literal

from autovend.marks import counted
from autovend.validation.bootstrap import COMPARED, EXACT_BELOW, MIN_MACHINES, TEST_LEVEL, Comparison, Scorer
from autovend.validation.controls import CONTROLS, EQUAL_BY_CONSTRUCTION
from autovend.validation.weeks import METHOD, MIN_WEEKS, WeekBootstrap

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
WEEK_RULE = (
    "validated: better than the persistence and naive references on machine-week WAPE and than product-level "
    "persistence and reversed popularity on product-level WAPE, each with the 95% interval of the difference "
    "excluding zero, the interval a circular block bootstrap over the test window's weeks (fewer than "
    f"{MIN_MACHINES} machines: the machines held together, weeks resampled; the exact sign-flip test over machines "
    "is reported but cannot reach p < 0.05, so it does not decide): weaker evidence than a machine bootstrap's, "
    "for these machines only; worse_than_reference: one of those comparisons decided in the other's favour; "
    "not_distinguishable: otherwise"
)


def interval_text(n_machines: int, n_boot: int, weeks: WeekBootstrap | None) -> str:
    """verdict.json's `interval`: which bootstrap gave the intervals, over what, and what it speaks for."""
    exact = (
        f"; with {n_machines} machines each comparison also has the exact sign-flip test's one-sided p "
        f"(the smallest possible: 2^-{n_machines} = {2.0**-n_machines:.3g})"
        if n_machines < EXACT_BELOW
        else ""
    )
    if weeks is None:
        return (
            f"95% percentile interval over {n_boot} machine-cluster bootstrap resamples of {n_machines} machines{exact}"
        )
    machines = counted(n_machines, "machine")
    flips = (
        f"; each comparison also has the exact sign-flip test's one-sided p over the {machines}, reported but not "
        f"deciding (the smallest possible: 2^-{n_machines} = {2.0**-n_machines:.3g})"
    )
    if not weeks.usable:
        return (
            f"no interval: {machines} {'is' if n_machines == 1 else 'are'} too few for the machine-cluster bootstrap "
            f"(it needs {MIN_MACHINES}) and "
            f"{weeks.n_weeks} test weeks too few for a block bootstrap over weeks (it needs {MIN_WEEKS}), so no "
            f"comparison is decided{flips}"
        )
    these = "this machine" if n_machines == 1 else "these machines"
    return (
        f"95% percentile interval over {weeks.resamples} {METHOD} resamples of {weeks.n_weeks} weeks in blocks of "
        f"{weeks.block} weeks (round(W^(1/3))), the machines held together: weeks, not machines, are the resampled "
        f"unit; with {machines} the result speaks for {these} only{flips}"
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


def verdict_payload(
    comps: list[Comparison], shelves: Shelves, n_machines: int, n_boot: int, weeks: WeekBootstrap | None = None
) -> dict[str, Any]:
    """verdict.json: the verdict, the shelves, and every comparison with its interval (and p below 20 machines).

    `weeks`: the scorer's week bootstrap (fewer than MIN_MACHINES machines); it adds `resampling` (what was
    resampled and how) and the week rule. Without it the payload is the machine-cluster one, key for key.
    """
    out = {
        "verdict": decide(comps),
        "shelves": shelves,
        "rule": VERDICT_RULE if weeks is None else WEEK_RULE,
        "too_few_machines": bool(n_machines < EXACT_BELOW and 2.0**-n_machines >= TEST_LEVEL),
        "interval": interval_text(n_machines, n_boot, weeks),
        "rejected_controls": {k: v for k, v in rejected(comps).items() if v},
        "not_rejected_controls": [k for k, v in rejected(comps).items() if not v],
        "comparisons": [asdict(c) for c in comps],
    }
    if weeks is not None:
        out["resampling"] = {**weeks.payload(), "n_machines": n_machines}
    return out


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
    weeks = verdict.get("resampling")
    kind = "95% interval" if weeks is None else "95% week-bootstrap interval"
    lines = [f"{words[v]}: " + "; ".join(parts) + f" (model - other, {kind})."]
    if weeks is not None:
        lines.append(_few_machines_line(verdict, weeks))
    elif verdict.get("too_few_machines"):
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


def _few_machines_line(verdict: dict[str, Any], weeks: dict[str, Any]) -> str:
    """The headline's line on a source of one or two machines: what decides, and what it speaks for."""
    n = weeks["n_machines"]
    few = f"with {counted(n, 'machine')} its smallest p is {2.0**-n:.3g}"
    if not weeks["resamples"]:
        return (
            f"**Too few machines and weeks to decide**: the exact sign-flip test cannot reach p < 0.05 ({few}) and "
            f"{weeks['n_weeks']} test weeks are too few for a block bootstrap over weeks (it needs "
            f"{weeks['min_weeks']}), so there is no interval and no comparison can be called better or worse."
        )
    these = "this machine" if n == 1 else "these machines"
    return (
        f"**Too few machines for the sign-flip test** ({few}), so each comparison is decided by its week-bootstrap "
        f"interval: a {METHOD} over the {weeks['n_weeks']} test weeks in blocks of {weeks['block_weeks']}, the "
        "machines held together. That is weaker evidence than machines would give (neighbouring weeks of a machine "
        f"are dependent, and the window holds few blocks), and it speaks for {these} only, not for the operator's "
        "other machines."
    )

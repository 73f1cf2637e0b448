"""The paired part of a comparison: agents told apart by configuration, paired differences, comparison.json.

`write_comparison` (`autovend.evaluation.report`) relabels the runs (`labelled`: one agent name run with two
configurations is two agents), builds its table, then `paired_of(table)` pairs the agents seed by seed on
net assets and every headline metric (`autovend.evaluation.paired`) and `comparison_json` writes it all to
comparison.json:

    {"format": "autovend-comparison", "version": 1, "interval": "t", "level": 0.95, "power": 0.8,
     "comparable": true, "runs": [{"run", "agent", "seed", "days", "world_hash", "net_assets"}, ...],
     "agents": [{"agent", "runs", "seeds", "net_assets_mean", "net_assets_sd", "rank", "settings"}, ...],
     "paired": [{"a", "b", "metric", "n_seeds", "mean_difference", "ci_low", "ci_high",
                 "min_detectable_difference", ...}, ...],
     "references": [{"world_hash", "seed", "days", "hold", "oracle", "source"}, ...]}

Runs carry their `normalised_score` and agents its mean (`references_for`, `autovend.evaluation.headroom`).
The oracle's runs are labelled `oracle (privileged)`: it reads the hidden demand model.

Runs that are not comparable (compared with --force) are not paired: `paired` is empty and `comparable` false.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from autovend.evaluation.definitions import HEADLINE, format_metric, metric_header
from autovend.evaluation.headroom import Reference, compute_reference, oracle_series, reference
from autovend.evaluation.paired import (
    INTERVAL,
    LEVEL,
    POWER,
    SEED_COUNTS,
    PairedDifference,
    Results,
    agent_labels,
    paired_differences,
    paired_json,
    rank_order,
    ranks,
)
from autovend.evaluation.rundata import RunData

COMPARISON_JSON = "comparison.json"
COMPARISON_FORMAT = "autovend-comparison"
COMPARISON_VERSION = 1
PAIRED_METRICS = tuple(HEADLINE)  # net assets first


def labelled(runs: Sequence[RunData]) -> tuple[list[RunData], dict[str, str]]:
    """The runs with their agent relabelled where one agent name ran with several configurations (`agent_labels`).

    Also returns each new label's differing settings (for the notes of comparison.md and comparison.json).
    """
    labels, settings = agent_labels([(r.agent, r.meta.get("agent_config") or {}) for r in runs])
    labels = [f"{x}{PRIVILEGED_SUFFIX}" if r.meta.get("privileged") else x for r, x in zip(runs, labels, strict=True)]
    out = [
        r if label == r.agent else dataclasses.replace(r, meta={**r.meta, "agent": label})
        for r, label in zip(runs, labels, strict=True)
    ]
    return out, settings


NORMALISED = "normalised_score"
NORMALISED_LABEL = "Normalised score"
NORMALISED_NOTE = "(agent − hold) / (oracle − hold), final net assets on the same world, seed and days"
PRIVILEGED_SUFFIX = " (privileged)"


def references_for(
    runs: Sequence[RunData], compute: bool = True, on_compute: Callable[[int, int], None] | None = None
) -> dict[tuple[str, int, int], Reference]:
    """The hold and oracle reference of each (world hash, seed, days) among the runs (`autovend.evaluation.headroom`).

    From the oracle runs among them, else the world's manifest, else (with `compute`) an oracle run made in memory;
    `on_compute(seed, days)` is called before each such run (it takes about as long as a baseline run).
    """
    series = oracle_series((r.meta, r.daily["net_assets"].tolist()) for r in runs)
    out: dict[tuple[str, int, int], Reference] = {}
    for r in runs:
        key = (r.world_hash, r.seed, r.days)
        if key in out or r.days < 1:
            continue
        found = reference(r.world, r.seed, r.days, series, r.meta.get("world_path"))
        if found is None and compute:
            if on_compute is not None:
                on_compute(r.seed, r.days)
            found = compute_reference(r.world, r.seed, r.days)
        if found is not None:
            out[key] = found
    return out


def normalised_scores(runs: Sequence[RunData], refs: dict[tuple[str, int, int], Reference]) -> list[float | None]:
    """Each run's normalised score (None where its world, seed and days have no reference)."""
    out = []
    for r in runs:
        ref = refs.get((r.world_hash, r.seed, r.days))
        out.append(None if ref is None else ref.score(r.final_net_assets))
    return out


def _finite(value: Any) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def results_of(table: pd.DataFrame) -> Results:
    """agent -> seed -> metric -> value, from a comparison table (`report.compare`)."""
    out: dict[str, dict[int, dict[str, float | None]]] = {}
    for row in table.to_dict("records"):
        out.setdefault(str(row["agent"]), {})[int(row["seed"])] = {k: _finite(row.get(k)) for k in PAIRED_METRICS}
    return out


def paired_of(table: pd.DataFrame) -> list[PairedDifference]:
    """Every pair of agents in the table on every headline metric, best agent (mean net assets) first."""
    return paired_differences(results_of(table), PAIRED_METRICS)


def agent_ranks(table: pd.DataFrame, paired: Sequence[PairedDifference]) -> dict[str, str]:
    """Each agent's rank by net assets, shared where the paired interval does not tell them apart."""
    return ranks(rank_order(results_of(table)), paired)


def comparison_json(
    table: pd.DataFrame,
    summary: pd.DataFrame,
    paired: Sequence[PairedDifference],
    comparable: bool,
    settings: dict[str, str] | None = None,
    refs: dict[tuple[str, int, int], Reference] | None = None,
) -> dict[str, Any]:
    """The content of comparison.json (module docstring); `settings`: what tells configurations apart (`labelled`)."""
    rank = agent_ranks(table, paired)
    runs = [
        {
            "run": str(r["run"]),
            "agent": str(r["agent"]),
            "seed": int(r["seed"]),
            "days": int(r["days"]),
            "world_hash": str(r["world_hash"] or ""),
            "net_assets": _finite(r["net_assets"]),
            NORMALISED: _finite(r.get(NORMALISED)),
        }
        for r in table.to_dict("records")
    ]
    agents = []
    for agent, row in summary.iterrows():
        seeds = sorted(int(s) for s in table.loc[table["agent"] == agent, "seed"])
        agents.append(
            {
                "agent": str(agent),
                "runs": int(row["runs"]),
                "seeds": seeds,
                "net_assets_mean": _finite(row["net_assets"]),
                "net_assets_sd": _finite(row["net_assets_std"]),
                f"{NORMALISED}_mean": _finite(row.get(NORMALISED)),
                "rank": rank.get(str(agent)),
                "settings": (settings or {}).get(str(agent)),
            }
        )
    return {
        "format": COMPARISON_FORMAT,
        "version": COMPARISON_VERSION,
        "interval": INTERVAL,
        "level": LEVEL,
        "power": POWER,
        "comparable": comparable,
        "runs": runs,
        "agents": agents,
        "paired": paired_json(paired if comparable else ()),
        "references": [ref.to_json() for ref in (refs or {}).values()],
    }


def _diff(metric: str, value: float | None) -> str:
    """A difference in the metric's shown units (its sign kept)."""
    if value is None:
        return "–"
    text = format_metric(metric, value)
    return text if text.startswith("-") or text == "–" else f"+{text}"


def _interval(metric: str, lo: float | None, hi: float | None) -> str:
    return "–" if lo is None or hi is None else f"[{_diff(metric, lo)}, {_diff(metric, hi)}]"


def paired_rows(p: PairedDifference) -> list[str]:
    """One pair's cells: a − b, seeds, mean difference, paired and unpaired intervals, detectable differences."""
    mdd = " / ".join(
        _diff(p.metric, v).lstrip("+")
        for v in (p.min_detectable_difference, p.min_detectable_difference_5, p.min_detectable_difference_10)
    )
    return [
        f"{p.a} − {p.b}",
        str(p.n_seeds),
        _diff(p.metric, p.mean_difference),
        _interval(p.metric, p.ci_low, p.ci_high),
        _interval(p.metric, p.unpaired_low, p.unpaired_high),
        mdd,
    ]


def paired_markdown(paired: Sequence[PairedDifference], comparable: bool, currency: str) -> list[str]:
    """comparison.md's section on paired differences (net assets, then every other metric; money in `currency`)."""
    lines = ["## Paired differences (same seeds)", ""]
    if not comparable:
        return [*lines, "Not computed: the runs are not comparable (compared with --force).", ""]
    if not paired:
        return [*lines, "None: no two agents were run on a common seed.", ""]
    counts = " / ".join(["n", *(str(k) for k in SEED_COUNTS)])
    lines.append(
        f"a − b over the seeds both agents ran. Paired: the 95% {INTERVAL} interval of the mean of the per-seed "
        "differences; unpaired: the 95% Welch t interval of the difference of the means on the same runs. "
        f"Minimum detectable difference: what a paired t-test (5%, two-sided) finds with 80% power at {counts} "
        "seeds, from the observed spread of the differences."
    )
    header = "| a − b | seeds | mean difference | paired 95% interval | unpaired 95% interval | min. detectable |"
    for metric in PAIRED_METRICS:
        mine = [p for p in paired if p.metric == metric]
        if not mine:
            continue
        lines += ["", f"### {metric_header(metric, currency)}", "", header, "|---|---:|---:|---:|---:|---:|"]
        lines += ["| " + " | ".join(paired_rows(p)) + " |" for p in mine]
    return [*lines, ""]

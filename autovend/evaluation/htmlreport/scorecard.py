"""The top of report.html: a scorecard a reader takes in at a glance, and the agent's config folded away.

- the final net assets (in the world's currency) with the start cash and the growth;
- the normalised score: a slot, marked `data-slot="normalised-score"`, that shows "–" until the hold and
  oracle references of the world exist ([Q]: `(agent − hold) / (oracle − hold)`); pass a `NormalisedScore`
  to fill it;
- the 14 headline metrics, one tile each (label, value, unit; the definition as the tile's tooltip and in
  the metrics section below), and the failure-mode counts, each linked to its findings.

`config_block` is the agent config as indented JSON in a folded <details> (it used to open the page).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from autovend.evaluation.definitions import DEFINITIONS, FAILURE_LABELS, HEADLINE, format_metric, metric_unit
from autovend.evaluation.htmlreport.page import esc

SCORECARD_STYLE = """
.scorecard { margin: 6px 0 10px; }
.scorecard .headline { display: flex; flex-wrap: wrap; gap: 10px; margin-bottom: 8px; }
.scorecard .card { border: 1px solid #ddd; border-radius: 4px; padding: 6px 10px; background: #fff; }
.scorecard .headline .card { min-width: 260px; }
.scorecard .headline .value { font-size: 26px; font-weight: 600; }
.scorecard .label { display: block; color: #555; font-size: 12px; }
.scorecard .value { font-size: 18px; font-variant-numeric: tabular-nums; }
.scorecard .unit, .scorecard .sub { color: #666; font-size: 12px; }
.scorecard .sub, .scorecard .tiles .unit { display: block; }
.scorecard .failures .warn { color: #a33; font-weight: 600; }
.scorecard .slot { border-style: dashed; color: #555; }
.scorecard .tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(165px, 1fr)); gap: 6px; }
.scorecard .tiles .card { padding: 4px 8px; cursor: help; }
.scorecard .failures { margin: 6px 0 0; font-size: 13px; }
details.config { margin: 4px 0 10px; }
details.config summary { cursor: pointer; color: #1f5fa8; }
details.config pre { background: #f8f8f8; border: 1px solid #e4e4e4; padding: 6px; max-height: 360px; overflow: auto;
  font-size: 12px; }
"""


@dataclass(frozen=True)
class NormalisedScore:
    """The run's normalised score and the references it is measured against (net assets, in the world's currency)."""

    score: float  # (agent - hold) / (oracle - hold)
    hold: float
    oracle: float


def _money(x: float) -> str:
    return f"{x:,.2f}"


def normalised_card(normalised: NormalisedScore | None, currency: str) -> str:
    """The normalised score's tile: the slot another part of the evaluation fills ("–" until then)."""
    if normalised is None:
        value, sub = "–", "(agent − hold) / (oracle − hold): no hold and oracle references for this world yet"
    else:
        value = f"{normalised.score:.3f}"
        sub = f"hold {_money(normalised.hold)} {currency}, oracle {_money(normalised.oracle)} {currency}"
    return (
        '<div class="card slot" id="normalised-score" data-slot="normalised-score">'
        f'<span class="label">Normalised score</span><span class="value">{esc(value)}</span>'
        f'<span class="sub">{esc(sub)}</span></div>'
    )


def scorecard_html(
    metrics: dict[str, Any],
    final_net_assets: float,
    start_cash: float,
    currency: str,
    normalised: NormalisedScore | None = None,
) -> str:
    """The scorecard (see the module docstring); `id="scorecard"`, each metric tile `data-metric=<key>`.

    `currency`: the world's (the unit of money).
    """
    growth = final_net_assets - start_cash
    headline = (
        '<div class="card" id="final-net-assets" data-metric="final_net_assets">'
        '<span class="label">Final net assets</span>'
        f'<span class="value">{esc(_money(final_net_assets))}</span> <span class="unit">{esc(currency)}</span>'
        f'<span class="sub">start cash {esc(_money(start_cash))}, growth {esc(f"{growth:+,.2f}")}</span></div>'
    )
    tiles = []
    for key, (label, _, _, _) in HEADLINE.items():
        unit = metric_unit(key, currency)
        tiles.append(
            f'<div class="card" data-metric="{esc(key)}" title="{esc(DEFINITIONS[key])}">'
            f'<span class="label">{esc(label)}</span><span class="value">{esc(format_metric(key, metrics.get(key)))}'
            f'</span> <span class="unit">{esc(unit)}</span></div>'
        )
    counts = metrics.get("failure_counts") or {}
    failures = ", ".join(
        f'<a href="#finding-{esc(mode)}"{" class=warn" if counts.get(mode) else ""}>'
        f"{esc(label)}: {int(counts.get(mode, 0)):,}</a>"
        for mode, label in FAILURE_LABELS.items()
    )
    return (
        '<section class="scorecard" id="scorecard"><div class="headline">'
        f"{headline}{normalised_card(normalised, currency)}"
        f'</div><div class="tiles">{"".join(tiles)}</div>'
        f'<p class="failures">Failure modes: {failures} · <a href="#metrics">the metrics with their definitions</a>'
        "</p></section>"
    )


def config_block(config: dict[str, Any] | None) -> str:
    """The agent config as indented JSON, folded ("agent config (N settings)")."""
    config = config or {}
    text = json.dumps(config, sort_keys=True, ensure_ascii=False, indent=2)
    return (
        f'<details class="config" id="agent-config"><summary>agent config ({len(config)} settings)</summary>'
        f"<pre>{esc(text)}</pre></details>"
    )

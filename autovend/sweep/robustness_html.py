"""robustness.html: the heat map of a sweep's agents x world variants (normalised scores), with the orders and flips.

One section per world: a table with the agents as rows (in the world's own order) and its variants as columns
(the world itself first), each cell the agent's mean normalised score in that variant, coloured from red (below
hold) through white (hold, 0) to green (the oracle, 1) and blue (above it); the tooltip gives the mean net assets.
A variant without hold and oracle runs shows its agents' net assets scaled from worst (0) to best (1), marked
"scaled". Below the map: Kendall's tau of each variant against the world's order, and the flips in sentences
(`autovend.sweep.robustness`). The page is plain HTML and CSS (no script), and the same rows give the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

from autovend.evaluation.htmlreport.page import STYLE as PAGE_STYLE
from autovend.evaluation.htmlreport.page import Cell, esc, num, table, text
from autovend.sweep.robustness import WorldRobustness

BINS = (  # upper bound of the score, CSS class, background
    (-0.5, "h-neg2", "#e06c6c"),
    (0.0, "h-neg1", "#f4b6b6"),
    (0.2, "h-0", "#ffffff"),
    (0.4, "h-1", "#dff2df"),
    (0.6, "h-2", "#bfe5bf"),
    (0.8, "h-3", "#9fd89f"),
    (1.0 + 1e-9, "h-4", "#7fcb7f"),
    (float("inf"), "h-up", "#9ec5f0"),
)
STYLE = "".join(f" td.{css} {{ background: {color}; }}" for _, css, color in BINS) + (
    " td.h-none { background: #f0f0f0; color: #888; } table.heat td { min-width: 64px; }"
)


def _css(score: float | None) -> str:
    if score is None:
        return "h-none"
    return next(css for bound, css, _ in BINS if score < bound)


def _heat_map(w: WorldRobustness) -> str:
    agents = list(w.variants[0].order)
    for v in w.variants[1:]:
        agents += [a for a in v.order if a not in agents]
    header = [text("agent")] + [
        Cell(esc(v.label), False, f"{v.kind} {v.name}: {v.summary}".strip()) for v in w.variants
    ]
    rows = []
    for a in agents:
        cells = [text(a)]
        for v in w.variants:
            score = v.score.get(a)
            shown = "–" if score is None else f"{score:.2f}" + (" (scaled)" if v.scaled else "")
            title = f"{a} on {v.label}: mean net assets {v.net_assets[a]:,.0f}" if a in v.net_assets else ""
            cells.append(Cell(esc(shown), True, title, _css(score)))
        rows.append(cells)
    tau = [text("Kendall's tau")] + [num("–" if v.tau is None else f"{v.tau:.2f}") for v in w.variants]
    return '<div class="wide">' + table(header, [*rows, tau]).replace("<table>", '<table class="heat">', 1) + "</div>"


def robustness_html(report: Sequence[WorldRobustness]) -> str:
    """The whole page (module docstring): plain HTML and CSS, no script."""
    n = sum(len(w.variants) for w in report)
    facts = [
        f"{len(report)} world(s), {n} variants (each world itself included)",
        "cells: mean normalised score (agent − hold) / (oracle − hold) over the seeds: 0 = hold, 1 = the privileged "
        "oracle; 'scaled': no reference in that variant, net assets scaled worst 0 to best 1",
    ]
    sections = []
    for w in report:
        flips = (
            "".join(f"<li>{esc(s)}</li>" for s in w.flips)
            or f"<li>No variant changes the order of {esc(w.world)}.</li>"
        )
        pairs = table(
            [text(h) for h in ("A", "B", "variants", "A beats B", "B beats A", "not told apart", "share A beats B")],
            [
                [
                    text(p.a),
                    text(p.b),
                    num(str(p.variants)),
                    num(str(p.a_wins)),
                    num(str(p.b_wins)),
                    num(str(p.undecided)),
                    num(
                        f"{p.share:.2f}" + ("" if p.share_low is None else f" [{p.share_low:.2f}, {p.share_high:.2f}]")
                    ),
                ]
                for p in w.pairs
            ],
        )
        sections.append(
            f"<section><h2>{esc(w.world)}</h2>\n{_heat_map(w)}<h3>Pairs</h3>{pairs}"
            f'<h3>Where the order flips</h3><ul class="finding-list">{flips}</ul></section>'
        )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Rankings across variants</title><style>{PAGE_STYLE}{STYLE}</style></head>",
        "<body><header><h1>Rankings across variants</h1>",
        '<ul class="facts">' + "".join(f"<li>{esc(f)}</li>" for f in facts) + "</ul></header>",
        *sections,
        "</body></html>",
        "",
    ]
    return "\n".join(parts)

"""The headline metrics and failure modes as reports show them: labels, units, formats and one-line definitions.

Shared by the Markdown report (`evaluation.report`), the HTML pages (`evaluation.htmlreport`) and the sweep's
tables; the metrics themselves are computed in `evaluation.metrics` and `evaluation.failures`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

# Headline metrics: key -> (label, unit, format, scale); scale turns the stored value into the shown one. A unit
# names money as {currency}: `metric_unit` fills in the world's (`autovend.currency`).
HEADLINE: dict[str, tuple[str, str, str, float]] = {
    "net_assets": ("Net assets", "thousand {currency}", "{:.2f}", 1e-3),
    "assortment": ("Assortment", "score", "{:.3f}", 1.0),
    "waste_rate": ("Waste rate", "%", "{:.2f}", 100.0),
    "pricing_regret": ("Pricing regret", "{currency} / machine / day", "{:.2f}", 1.0),
    "shelf_utilization": ("Shelf utilization", "%", "{:.2f}", 100.0),
    "empty_share": ("Empty site-days", "%", "{:.2f}", 100.0),
    "capital_efficiency": ("Capital efficiency", "GP / inventory per day", "{:.4f}", 1.0),
    "tool_calls": ("Tool calls", "calls", "{:.0f}", 1.0),
    "api_efficiency": ("API efficiency", "{currency} / USD", "{:.1f}", 1.0),
    "reassignment_gap": ("Reassignment gap", "%", "{:.2f}", 100.0),
    "availability": ("Availability (days 16+)", "%", "{:.2f}", 100.0),
    "cycle_return": ("Visit-cycle return", "{currency} / machine / day", "{:.2f}", 1.0),
    "asset_growth_early": ("Asset growth, early", "{currency} / day", "{:.1f}", 1.0),
    "asset_growth_late": ("Asset growth, late", "{currency} / day", "{:.1f}", 1.0),
}
FAILURE_LABELS = {
    "infeasible_retries": "Infeasible allocations retried",
    "dead_stock_orders": "Orders into dead stock",
    "fragmented_visits": "Fragmented visits",
    "recurring_rejections": "Rejected batches recurring",
}


# One line per headline metric: what it measures (the exact definitions: the docstrings of `evaluation.metrics`).
DEFINITIONS: dict[str, str] = {
    "net_assets": "Cash plus unexpired inventory at cost at the close of the last settled day.",
    "assortment": "Expected gross profit of each machine's product mix on a standard display over that of a "
    "heuristic mix of as many products (mean over checkpoints and stocked machines; 1 = as good).",
    "waste_rate": "Expiry and early-disposal write-offs over (cost of the unexpired units sold + those write-offs).",
    "pricing_regret": "Expected gross profit a price search finds above the agent's prices on the same shelf, "
    "per sampled stocked machine-day.",
    "shelf_utilization": "Unexpired units on the shelf before sales over capacity, mean over machine-days.",
    "empty_share": "Share of machine-days with no unexpired unit on the shelf before sales.",
    "capital_efficiency": "Mean daily gross profit over mean inventory value at cost (shelves, warehouse, in transit).",
    "tool_calls": "Tool calls in the episode, failed calls and end_day included.",
    "api_efficiency": "Net-asset growth (final minus start cash) per USD of API cost; none without an API cost.",
    "reassignment_gap": "Share of the mixes' value lost to where they sit: (best reassignment of the mixes across "
    "machines - actual) / best, mean over checkpoints.",
    "availability": "Share of machine-days, from the execution window's first day (16), with an unexpired unit "
    "on the shelf before sales.",
    "cycle_return": "Gross profit of a machine between two visits minus one visit fee, per machine per cycle-day.",
    "asset_growth_early": "Net-asset growth per day over the early window (days 16-45 by default).",
    "asset_growth_late": "Net-asset growth per day over the late window (days 136-165 by default).",
}
# One line per failure mode (the detectors' exact rules: the docstring of `evaluation.failures`).
FAILURE_DEFINITIONS: dict[str, str] = {
    "infeasible_retries": "A restock rejected for insufficient warehouse stock, tried again for the same machine "
    "and product within the retry window without the stock.",
    "dead_stock_orders": "An order of a product that sold nothing anywhere in the window before, while the "
    "warehouse already held unexpired units of it.",
    "fragmented_visits": "A visit to a machine whose sales since its previous visit made less gross profit than "
    "one visit fee.",
    "recurring_rejections": "A batch call whose rejected items are exactly those of a call on an earlier day.",
}


def metric_unit(key: str, currency: str) -> str:
    """A headline metric's unit as shown, money in `currency` ("thousand USD", "USD / machine / day", "%")."""
    return HEADLINE[key][1].replace("{currency}", currency)


def metric_header(key: str, currency: str) -> str:
    """A headline metric's label with its unit: "Net assets (thousand USD)"."""
    return f"{HEADLINE[key][0]} ({metric_unit(key, currency)})"


def format_metric(key: str, value: Any) -> str:
    """A headline metric's value as shown (HEADLINE's scale and format); "–" when missing or not finite."""
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "–"
    _, _, fmt, scale = HEADLINE[key]
    return fmt.format(float(value) * scale)

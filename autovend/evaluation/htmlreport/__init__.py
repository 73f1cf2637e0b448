"""report.html: one self-contained, interactive page per run and per comparison (Bokeh charts inlined).

- `write_run_html(run, metrics, path)` (`run_page`): a scorecard (final net assets, the normalised
  score's slot, the 14 metrics at a glance) and the agent config folded, then net assets, cash against inventory, stock,
  revenue per machine and site type, stockouts and lost demand, the price-multiplier path, the
  metrics with a one-line definition each, the failure-mode findings linked to the day table, and
  the day-by-day table with filters.
- `write_comparison_html(runs, table, summary, check, path)` (`compare_page`): the runs' net assets
  side by side, mean ± std per agent, every run's metrics and failure counts.

The pieces: `tables` (what is drawn, from a `RunData`), `charts` (Bokeh figures), `embed` (BokehJS
inline and byte-stable chart JSON), `page` (the HTML, its style and the filter script), `scorecard`
(the top of a run's page).
"""

from autovend.evaluation.htmlreport.compare_page import comparison_html, write_comparison_html
from autovend.evaluation.htmlreport.run_page import run_html, write_run_html

__all__ = ["comparison_html", "run_html", "write_comparison_html", "write_run_html"]

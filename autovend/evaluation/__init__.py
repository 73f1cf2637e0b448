"""Evaluation metrics and reports of runs.

The run folder and its loader: `RunData.load(run_dir)`, `save_run_data(session_or_sim, run_dir, meta)`
(`autovend.evaluation.rundata`). The metrics: `compute_metrics(run)` (`autovend.evaluation.metrics`).
Reports: `write_run_outputs(run)` (metrics.json, report.md, report.html, figures), `compare(runs)`,
`summarize(table)` and `write_comparison(runs, out_dir)` (`autovend.evaluation.report`); report.html
is built by `autovend.evaluation.htmlreport`.
"""

from autovend.evaluation.metrics import compute_metrics
from autovend.evaluation.report import compare, load_metrics, summarize, write_comparison, write_run_outputs
from autovend.evaluation.rundata import RunData, save_run_data
from autovend.evaluation.settings import EvalSettings

__all__ = [
    "EvalSettings",
    "RunData",
    "compare",
    "compute_metrics",
    "load_metrics",
    "save_run_data",
    "summarize",
    "write_comparison",
    "write_run_outputs",
]

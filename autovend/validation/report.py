"""Writing a validation: metrics.json, verdict.json, provenance.json, plot data (CSV), figures, validation.md.

A metric that was not computed is NaN in memory, null in the JSON files and "–" in validation.md, with its
reason in provenance.json; nothing non-finite is written.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from autovend.errors import NonFiniteError
from autovend.io import OutputKind, output_dir
from autovend.validation.figures import PLOT_FILES, draw_all
from autovend.validation.markdown import render_markdown
from autovend.validation.summary import ValidationResult

# Significant digits of the floats in metrics.json: a float's last digits can differ between machines
# (summation order, libraries), and the committed report should change only when a number does.
METRIC_DIGITS = 6


def rounded(value: Any, digits: int = METRIC_DIGITS) -> Any:
    """`value` with every finite float in it (in nested dicts and lists too) rounded to `digits` significant digits."""
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float):
        value = float(value)
        return float(f"{value:.{digits}g}") if math.isfinite(value) else value
    if isinstance(value, dict):
        return {k: rounded(v, digits) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(v, digits) for v in value]
    return value


def json_ready(value: Any, path: str = "metrics") -> Any:
    """`value` with NaN as None (null: not computed), in nested dicts and lists too.

    An infinity raises NonFiniteError: no metric is infinite, so one would be a bug to report, not to hide.
    """
    if isinstance(value, float):
        if math.isinf(value):
            raise NonFiniteError(f"{path} is infinite; a validation metric must be finite or not computed")
        return None if math.isnan(value) else value
    if isinstance(value, dict):
        return {k: json_ready(v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v, f"{path}[{i}]") for i, v in enumerate(value)]
    return value


def payload(value: Any, name: str) -> Any:
    """A JSON-ready copy: floats rounded to `METRIC_DIGITS` significant digits, NaN as null."""
    return json_ready(rounded(value), name)


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, allow_nan=False, ensure_ascii=False) + "\n"


HEADLINE_KEYS = ("wape", "wape_product", "tvd", "spearman", "crps", "volume_error", "n_machines", "test_weeks")


def headline(metrics: dict[str, Any]) -> dict[str, Any]:
    """headline.json: the model's top-level numbers of metrics.json, flat (DVC's metrics file; `dvc exp show`).

    The rest (intervals, references, controls, estimators, variants) stays in metrics.json, which DVC keeps as
    a plain output: declared as metrics, its ~130 numbers per validation made `dvc exp show` unreadable.
    """
    return {k: metrics[k] for k in HEADLINE_KEYS if k in metrics}


def write_validation(
    res: ValidationResult,
    out_dir: str | Path,
    source_name: str,
    limits: str = "",
    other_share: float = 0.005,
    *,
    force: bool = False,
) -> None:
    """Write metrics.json, headline.json, verdict.json, provenance.json, plots/*.csv, the figures and validation.md.

    metrics.json holds numbers only (floats to `METRIC_DIGITS` significant digits, null where a metric was not
    computed). The folder `out_dir` is replaced atomically; it must be absent, empty or an earlier validation
    report (`autovend.io.output_dir`) unless `force`. Nothing written depends on the machine's speed or the date.
    """
    metrics = payload(res.metrics, "metrics")
    verdict = payload(res.verdict, "verdict")
    provenance = payload(res.provenance, "provenance")
    with output_dir(out_dir, OutputKind.VALIDATION_REPORT, force=force) as tmp:
        (tmp / "metrics.json").write_text(_json(metrics), encoding="utf-8")
        (tmp / "headline.json").write_text(_json(headline(metrics)), encoding="utf-8")
        (tmp / "verdict.json").write_text(_json(verdict), encoding="utf-8")
        (tmp / "provenance.json").write_text(_json(provenance), encoding="utf-8")
        plots = tmp / "plots"
        plots.mkdir()
        res.weekly.to_csv(plots / PLOT_FILES["weekly"], index=False, float_format="%.4f")
        res.subcategory.to_csv(plots / PLOT_FILES["subcategory"], index=False, float_format="%.6f")
        res.scores.to_csv(plots / PLOT_FILES["scores"], index=False, float_format="%.6f")
        res.comparisons.to_csv(plots / PLOT_FILES["comparisons"], index=False, float_format="%.6f")
        res.backtest.to_csv(plots / PLOT_FILES["level_backtest"], index=False, float_format="%.6f")
        draw_all(tmp, other_share)
        text = render_markdown(metrics, verdict, provenance, source_name, limits)
        (tmp / "validation.md").write_text(text, encoding="utf-8")

"""Writing a sweep's robustness report: robustness.md, .json and .html in the sweep's folder."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from autovend.io import atomic_write_text
from autovend.sweep.results import ResultRow
from autovend.sweep.robustness import (
    ROBUSTNESS_FILE,
    ROBUSTNESS_HTML,
    ROBUSTNESS_JSON,
    robustness,
    robustness_json,
    robustness_markdown,
    summary_markdown,
)
from autovend.sweep.robustness_html import robustness_html
from autovend.sweep.variants import Variant


def write_robustness(rows: Sequence[ResultRow], out_dir: str | Path, variants: Sequence[Variant]) -> str:
    """Write robustness.md, .json and .html into OUT; return the leaderboard's summary section."""
    report = robustness(rows, variants)
    out = Path(out_dir)
    atomic_write_text(out / ROBUSTNESS_FILE, robustness_markdown(report))
    atomic_write_text(out / ROBUSTNESS_JSON, robustness_json(report))
    atomic_write_text(out / ROBUSTNESS_HTML, robustness_html(report))
    return summary_markdown(report)

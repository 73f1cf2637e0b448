"""The replay's inline SVG line chart: days across, values up, round-number ticks on both axes, a day marker.

`nice_ticks(lo, hi)` picks 4 to 8 round values (steps of 1, 2 or 5 times a power of ten) spanning the data;
the y axis is drawn from the first to the last of them with a light grid line at each, so a reader can read
any point off the chart, not only the extremes. The x axis gets ticks at round days (day 1 and the last day
always labelled).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from autovend.console.html import esc

WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 640, 220, 62, 14, 10, 24
MAX_TICKS = 8


@dataclass(frozen=True)
class Series:
    """One line of a chart: label, values of days 1..n, colour."""

    label: str
    values: Sequence[float]
    color: str


def nice_step(span: float, target: int = 5) -> float:
    """A round step (1, 2 or 5 times a power of ten) that cuts `span` into about `target` parts."""
    raw = span / max(target, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    for factor in (1.0, 2.0, 5.0, 10.0):
        if raw <= factor * power * (1 + 1e-9):
            return factor * power
    return 10.0 * power


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[float]:
    """Round tick values from at most `lo` to at least `hi` (4 to MAX_TICKS of them, evenly spaced)."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return [0.0, 1.0]
    if hi - lo < 1e-9:
        lo, hi = lo - 1.0, hi + 1.0
    step = nice_step(hi - lo, target)
    while True:
        first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
        if last - first + 1 <= MAX_TICKS:
            return [round(i * step, 10) for i in range(first, last + 1)]
        step = nice_step(step * 2.5, 1)  # too many: the next round step up


def tick_label(value: float, step: float) -> str:
    """A tick's label: "40k" once the step is a thousand or more, else the value with the step's decimals."""
    if step >= 1000 and abs(value) >= 1000:
        return f"{value / 1000:,.{0 if step % 1000 == 0 else 1}f}k"
    decimals = 0 if step >= 1 else min(6, -math.floor(math.log10(step)))
    return f"{value:,.{decimals}f}"


def day_ticks(n: int) -> list[int]:
    """Days to label on the x axis: 1, round days in between, and n."""
    if n <= 1:
        return [1]
    step = max(1, int(nice_step(n, 6)))
    inner = [d for d in range(step, n, step) if d - 1 >= step / 2 and n - d >= step / 2]
    return [1, *inner, n]


def line_chart(series: Sequence[Series], marker_day: int = 1, title: str = "") -> str:
    """An inline SVG line chart of days 1..n with a vertical day marker (class "marker", moved by the script).

    The marker carries its x of day 1 (`data-x0`) and the width of a day (`data-dx`). Y ticks are
    `<text class="ytick" data-value=...>`, x ticks `<text class="xtick" data-day=...>`.
    """
    n = max((len(s.values) for s in series), default=0)
    values = [float(v) for s in series for v in s.values if math.isfinite(float(v))]
    ticks = nice_ticks(min(values), max(values), 6) if values else [0.0, 1.0]
    lo, hi = ticks[0], ticks[-1]
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    dx = plot_w / max(n - 1, 1)

    def y_of(v: float) -> float:
        return TOP + (hi - v) / (hi - lo) * plot_h

    def xy(i: int, v: float) -> str:
        return f"{LEFT + i * dx:.1f},{y_of(v):.1f}"

    grid = []
    for t in ticks:
        y = y_of(t)
        grid.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + plot_w}" y2="{y:.1f}" stroke="#e6e6e6"/>')
        grid.append(
            f'<text class="ytick" data-value="{t:g}" x="{LEFT - 5}" y="{y + 4:.1f}" text-anchor="end">'
            f"{esc(tick_label(t, step))}</text>"
        )
    for d in day_ticks(n):
        x = LEFT + (d - 1) * dx
        anchor = "start" if d == 1 and n > 1 else "end" if d == n and n > 1 else "middle"
        grid.append(f'<line x1="{x:.1f}" y1="{TOP + plot_h}" x2="{x:.1f}" y2="{TOP + plot_h + 4}" stroke="#999"/>')
        grid.append(
            f'<text class="xtick" data-day="{d}" x="{x:.1f}" y="{HEIGHT - 6}" text-anchor="{anchor}">'
            f"{'day ' if d == 1 else ''}{d}</text>"
        )
    lines = []
    for s in series:
        points = " ".join(xy(i, float(v)) for i, v in enumerate(s.values) if math.isfinite(float(v)))
        lines.append(
            f'<polyline fill="none" stroke="{s.color}" stroke-width="1.6" points="{points}">'
            f"<title>{esc(s.label)}</title></polyline>"
        )
    x = LEFT + (marker_day - 1) * dx
    axes = (
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" stroke="#999"/>'
        f'<line x1="{LEFT}" y1="{TOP + plot_h}" x2="{LEFT + plot_w}" y2="{TOP + plot_h}" stroke="#999"/>'
    )
    marker = (
        f'<line class="marker" x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + plot_h}" stroke="#555" '
        f'stroke-dasharray="3,3" data-x0="{LEFT}" data-dx="{dx:.4f}"/>'
    )
    legend = "".join(f'<span><i style="background:{s.color}"></i>{esc(s.label)}</span>' for s in series)
    label = f' aria-label="{esc(title)}"' if title else ""
    return (
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img"{label}>{"".join(grid)}{axes}'
        f'{"".join(lines)}{marker}</svg><div class="legend">{legend}</div>'
    )

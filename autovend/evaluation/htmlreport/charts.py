"""The interactive charts of report.html, as Bokeh models built from plain tables (no I/O).

Each function takes the numbers to draw and returns one Bokeh figure; `embed.chart_item` turns it
into the JSON the page embeds. Data go in as Python lists (readable, exact JSON numbers); every chart
has pan, wheel zoom along the days (or bars), reset, save and a hover tooltip, and no tool whose
defaults hold NaN (the box-zoom overlay), so the page holds only finite numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd
from bokeh.models import (
    ColumnDataSource,
    DataRange1d,
    HoverTool,
    LinearAxis,
    NumeralTickFormatter,
    Range1d,
)
from bokeh.models.annotations import Span, Whisker
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from autovend.evaluation.htmlreport.tables import ALL_SITES

PALETTE = Category10_10
HEIGHT = 320
TOOLS = "pan,xwheel_zoom,reset,save"
MONEY = "0,0"  # thousands separators, no decimals
DASHES = ("solid", "dashed", "dotted", "dotdash", "dashdot")
LEGEND_INSIDE = 1  # legends with more entries go beside the plot, where they hide no data


def color(i: int) -> str:
    """The i-th colour of the fixed palette (cycling)."""
    return PALETTE[i % len(PALETTE)]


def _figure(title: str, y_label: str, *, x_label: str = "day", **kwargs: Any) -> figure:
    fig = figure(
        title=title,
        height=HEIGHT,
        sizing_mode="stretch_width",
        tools=TOOLS,
        active_scroll="xwheel_zoom",
        x_axis_label=x_label,
        y_axis_label=y_label,
        **kwargs,
    )
    fig.toolbar.logo = None
    return fig


HoverMode = Literal["mouse", "hline", "vline"]


def _finish(
    fig: figure, tooltips: list[tuple[str, str]], mode: HoverMode = "vline", renderers: list[Any] | None = None
) -> figure:
    """Add the hover tool; legends hide a series when clicked, and sit beside the plot when they are long."""
    fig.add_tools(HoverTool(tooltips=tooltips, mode=mode, renderers=renderers or "auto"))
    if fig.legend:
        legend = fig.legend[0]
        legend.click_policy = "hide"
        legend.label_text_font_size = "9pt"
        if len(legend.items) > LEGEND_INSIDE:
            fig.add_layout(legend, "right")
        else:
            legend.location = "top_left"
    return fig


@dataclass(frozen=True)
class Line:
    """One series of a line chart: its label, x values (days) and y values, and its colour."""

    label: str
    x: list[int]
    y: list[float]
    color: str
    width: float = 2.0
    dash: str = "solid"


def line_chart(title: str, y_label: str, lines: Sequence[Line], reference: float | None = None) -> figure:
    """Lines over the days (legend entries hide a line when clicked); `reference`: a dotted horizontal line."""
    fig = _figure(title, y_label)
    for ln in lines:
        src = ColumnDataSource({"day": ln.x, "value": ln.y, "series": [ln.label] * len(ln.x)})
        fig.line(
            "day", "value", source=src, color=ln.color, line_width=ln.width, line_dash=ln.dash, legend_label=ln.label
        )
    if reference is not None:
        fig.add_layout(Span(location=reference, dimension="width", line_color="grey", line_dash="dotted"))
    fig.yaxis.formatter = NumeralTickFormatter(format=MONEY)
    return _finish(fig, [("series", "@series"), ("day", "@day"), ("value", "@value{0,0.00}")])


def daily_lines(frame: pd.DataFrame, columns: dict[str, str], title: str, y_label: str) -> figure:
    """Several columns of a daily table (column -> legend label) as lines over `frame["day"]`."""
    lines = [
        Line(label, frame["day"].astype(int).tolist(), frame[col].astype(float).tolist(), color(i))
        for i, (col, label) in enumerate(columns.items())
    ]
    fig = line_chart(title, y_label, lines)
    if "units" in y_label:
        fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
    return fig


def _y_from_zero(fig: figure) -> None:
    """Start the y axis at 0 (the figure's default data range still picks the top)."""
    assert isinstance(fig.y_range, DataRange1d), "a figure made by _figure has a data range on y"
    fig.y_range.start = 0


def bar_chart(
    title: str, categories: list[str], values: list[float], colors: list[str], y_label: str, extra: dict[str, list]
) -> figure:
    """Vertical bars, one per category (names on the x axis, turned when many); `extra` columns show on hover."""
    fig = _figure(title, y_label, x_label="", x_range=categories)
    data = {"name": categories, "value": values, "color": colors, **extra}
    fig.vbar(x="name", top="value", width=0.8, source=ColumnDataSource(data), color="color")
    fig.yaxis.formatter = NumeralTickFormatter(format=MONEY)
    fig.xgrid.grid_line_color = None
    if len(categories) > 8:
        fig.xaxis.major_label_orientation = 0.9
    _y_from_zero(fig)
    tips = [("", "@name"), (y_label, "@value{0,0.00}"), *((k.replace("_", " "), f"@{k}") for k in extra)]
    return _finish(fig, tips, mode="mouse")


def stockout_chart(table: pd.DataFrame, currency: str, unit: str = "units") -> figure:
    """Lost demand (bars, in `unit`; revenue in `currency`), machines empty and products sold out (lines) per day.

    `unit`: "servings" for a made-to-order world, whose stock is ingredients (titled so).
    """
    title = "Stockouts and lost demand" if unit == "units" else "Ingredients run out and lost demand"
    fig = _figure(title, f"{unit} of demand lost")
    src = ColumnDataSource({c: table[c].tolist() for c in table.columns})
    bars = fig.vbar(
        x="day", top="lost", width=0.8, source=src, color=color(3), alpha=0.6, legend_label=f"lost demand ({unit})"
    )
    top = max(
        int(table["empty_machines"].to_numpy().max(initial=0)), int(table["sold_out"].to_numpy().max(initial=0)), 1
    )
    fig.extra_y_ranges = {"count": Range1d(start=0, end=top * 1.1)}
    fig.add_layout(LinearAxis(y_range_name="count", axis_label="machines empty / products sold out"), "right")
    fig.line(
        "day",
        "empty_machines",
        source=src,
        y_range_name="count",
        color=color(0),
        line_width=2,
        legend_label="machines empty",
    )
    fig.line(
        "day",
        "sold_out",
        source=src,
        y_range_name="count",
        color=color(1),
        line_width=2,
        legend_label="products sold out",
    )
    _y_from_zero(fig)
    tips = [
        ("day", "@day"),
        ("demand", f"@demand {unit}"),
        ("lost", f"@lost {unit} (@lost_revenue{{0,0.00}} {currency})"),
        ("machines empty", "@empty_machines"),
        ("products sold out", "@sold_out"),
    ]
    return _finish(fig, tips, renderers=[bars])


def price_chart(path: pd.DataFrame, band: tuple[float, float]) -> figure:
    """The price multiplier per day: min-max band and mean of all stocked slots, and the mean per site type."""
    fig = _figure("Price multiplier (price in force / reference price, stocked slots)", "x reference price")
    groups = list(dict.fromkeys(path["site_type"]))
    lines = []
    for i, group in enumerate(groups):
        part = path[path["site_type"] == group]
        src = ColumnDataSource({c: part[c].tolist() for c in part.columns})
        if group == ALL_SITES:
            fig.varea("day", "low", "high", source=src, color="grey", alpha=0.2, legend_label="min-max, all machines")
            lines.append(
                fig.line("day", "mean", source=src, color="black", line_width=2.5, legend_label="mean, all machines")
            )
        else:
            lines.append(
                fig.line("day", "mean", source=src, color=color(i - 1), line_width=1.5, legend_label=f"mean, {group}")
            )
    for level in band:
        fig.add_layout(Span(location=level, dimension="width", line_color="firebrick", line_dash="dashed"))
    fig.add_layout(Span(location=1.0, dimension="width", line_color="grey", line_dash="dotted"))
    tips = [("", "@site_type"), ("day", "@day"), ("mean", "@mean{0.000}"), ("min-max", "@low{0.000} - @high{0.000}")]
    tips.append(("stocked slots", "@slots"))
    return _finish(fig, tips, mode="mouse", renderers=lines)


def final_assets_chart(
    runs: list[str], agents: list[str], values: list[float], summary: pd.DataFrame, currency: str
) -> figure:
    """Final net assets of each run (dots coloured by agent) with each agent's mean ± sample std (dash, whiskers).

    Dots rather than bars from 0: the runs differ by a few per cent of their net assets.
    """
    agent_order = list(dict.fromkeys(agents))
    palette = {a: color(i) for i, a in enumerate(agent_order)}
    fig = _figure("Final net assets per run (agent mean ± std)", currency, x_label="", x_range=runs)
    data = {"run": runs, "agent": agents, "value": values, "color": [palette[a] for a in agents]}
    dots = fig.scatter(x="run", y="value", size=12, source=ColumnDataSource(data), color="color")
    rows: dict[str, list] = {"run": [], "mean": [], "lower": [], "upper": []}
    for agent in agent_order:
        mine = [r for r, a in zip(runs, agents, strict=True) if a == agent]
        mean = float(summary.loc[agent, "net_assets"])
        std = float(summary.loc[agent, "net_assets_std"]) if len(mine) > 1 else 0.0
        for r in mine:
            rows["run"].append(r)
            rows["mean"].append(round(mean, 2))
            rows["lower"].append(round(mean - std, 2))
            rows["upper"].append(round(mean + std, 2))
    whisk = ColumnDataSource(rows)
    fig.add_layout(Whisker(base="run", lower="lower", upper="upper", source=whisk, line_color="black"))
    for end in ("lower", "upper"):  # hidden points at the whiskers' ends keep them inside the y range
        fig.scatter("run", end, source=whisk, visible=False)
    fig.scatter("run", "mean", source=whisk, marker="dash", size=24, color="black", legend_label="agent mean ± std")
    fig.yaxis.formatter = NumeralTickFormatter(format=MONEY)
    fig.xgrid.grid_line_color = None
    if len(runs) > 6:
        fig.xaxis.major_label_orientation = 0.9
    tips = [("run", "@run"), ("agent", "@agent"), ("net assets", "@value{0,0.00}")]
    return _finish(fig, tips, mode="mouse", renderers=[dots])

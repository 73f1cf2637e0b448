"""Figures of runs: net assets over the days, the five-axis operational profile, early against late outcomes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from autovend.evaluation.rundata import RunData  # noqa: E402
from autovend.png import fixed_style, save_png  # noqa: E402

# Axis -> (metric key, sign): larger signed values are better (waste and regret are reversed).
PROFILE_AXES: dict[str, tuple[str, float]] = {
    "Profitability": ("net_assets", 1.0),
    "Assortment": ("assortment", 1.0),
    "Inventory": ("waste_rate", -1.0),
    "Pricing": ("pricing_regret", -1.0),
    "Capital efficiency": ("capital_efficiency", 1.0),
}
COLORS = tuple(matplotlib.color_sequences["tab10"])  # the tab10 colormap's ten colours
MIN_PROFILE_ROWS = 2  # the radar's min-max scores compare rows; one row alone would score 1 on every axis
VISIT_WINDOW = 7  # days; the operations figure shows machines visited as a rolling mean over this window


def net_asset_paths(runs: Sequence[RunData]) -> pd.DataFrame:
    """Net assets by day (rows, day 0 = the start cash) and run (columns, by run name)."""
    cols = {}
    for run in runs:
        d = run.daily
        cols[run.name] = pd.Series([run.start_cash, *d["net_assets"].tolist()], index=[0, *d["day"].tolist()])
    return pd.DataFrame(cols)


def net_assets_title(group_sizes: Sequence[int]) -> str:
    """The title of `net_assets_figure` for groups of the given numbers of runs: it says what a line is."""
    if sum(group_sizes) == 1:
        return "Net assets (one run)"
    if max(group_sizes, default=0) == 1:
        return f"Net assets ({sum(group_sizes)} runs, one line each)"
    return "Net assets (mean over each group's runs, min-max band)"


@fixed_style
def net_assets_figure(
    runs: Sequence[RunData], path: str | Path, groups: Sequence[str] | None = None, *, currency: str
) -> Path:
    """Net assets over the days: the mean of each group's runs (seeds) with its min-max band.

    `groups` gives each run's group (default: its agent name); a group of one run is its own line
    (no band), and the title says which case it is (`net_assets_title`). `currency`: the runs' worlds'.
    """
    path = Path(path)
    paths = net_asset_paths(runs)
    labels = list(groups) if groups is not None else [r.agent for r in runs]
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for i, group in enumerate(dict.fromkeys(labels)):
        cols = [r.name for r, g in zip(runs, labels, strict=True) if g == group]
        part = paths[cols] / 1000.0
        color = COLORS[i % len(COLORS)]
        mean = part.mean(axis=1)
        ax.plot(part.index, mean, color=color, lw=1.6, label=f"{group} (n={len(cols)})")
        if len(cols) > 1:
            ax.fill_between(part.index, part.min(axis=1), part.max(axis=1), color=color, alpha=0.18, lw=0)
    start = runs[0].start_cash / 1000.0 if runs else 0.0
    ax.axhline(start, color="grey", lw=0.8, ls=":", label="start cash")
    sizes = [labels.count(g) for g in dict.fromkeys(labels)]
    ax.set(xlabel="day", ylabel=f"net assets (thousand {currency})", title=net_assets_title(sizes))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return save_png(fig, path)


def profile_scores(summary: pd.DataFrame) -> pd.DataFrame:
    """Min-max normalised profile axes (`PROFILE_AXES`) of each row of `summary` (metric columns).

    Each axis is scaled to [0, 1] across the rows, 1 = best; when every row has the same value the
    axis is 1 for all; a missing value scores 0.
    """
    out = pd.DataFrame(index=summary.index)
    for axis, (key, sign) in PROFILE_AXES.items():
        vals = pd.to_numeric(summary.get(key, pd.Series(np.nan, index=summary.index)), errors="coerce") * sign
        lo, hi = vals.min(), vals.max()
        if pd.isna(lo):
            out[axis] = 0.0
        elif hi - lo <= 1e-12 * max(1.0, abs(hi)):
            out[axis] = np.where(vals.notna(), 1.0, 0.0)
        else:
            out[axis] = ((vals - lo) / (hi - lo)).fillna(0.0)
    return out


@fixed_style
def profile_figure(summary: pd.DataFrame, path: str | Path) -> Path:
    """Radar of the five-axis operational profile, one polygon per row of `summary` (e.g. per agent).

    The axes rank the rows against each other (`profile_scores`), so it takes at least two rows: with
    one, every axis would read 1 = best whatever the numbers (ValueError; callers skip the figure).
    """
    if len(summary) < MIN_PROFILE_ROWS:
        raise ValueError(
            f"the profile radar ranks agents against each other and needs at least {MIN_PROFILE_ROWS} rows, "
            f"got {len(summary)}; skip it for a single agent"
        )
    path = Path(path)
    scores = profile_scores(summary)
    axes = list(scores.columns)
    angles = np.linspace(0, 2 * np.pi, len(axes), endpoint=False).tolist()
    fig, ax = plt.subplots(figsize=(5.5, 5.5), subplot_kw={"polar": True})
    for i, (name, row) in enumerate(scores.iterrows()):
        vals = row.tolist()
        color = COLORS[i % len(COLORS)]
        ax.plot([*angles, angles[0]], [*vals, vals[0]], color=color, lw=1.6, label=str(name))
        ax.fill([*angles, angles[0]], [*vals, vals[0]], color=color, alpha=0.12)
    ax.set_xticks(angles)
    ax.set_xticklabels(axes, fontsize=9)
    ax.tick_params(axis="x", pad=12)
    ax.set_ylim(0, 1.05)
    ax.set_yticks([0.25, 0.5, 0.75, 1.0])
    ax.set_yticklabels([])
    ax.set_title("Operational profile (min-max across runs, 1 = best)", fontsize=10)
    ax.legend(fontsize=8, loc="upper right", bbox_to_anchor=(1.3, 1.1))
    fig.tight_layout()
    return save_png(fig, path)


def early_late_table(metrics: Sequence[dict[str, Any]], groups: Sequence[str]) -> pd.DataFrame:
    """Per group, the mean over its runs of the early and late per-day outcomes (`metrics.feedback`)."""
    rows = []
    for m, g in zip(metrics, groups, strict=True):
        fb = m.get("details", {}).get("feedback", {})
        for period in ("early", "late"):
            if fb.get(period):
                rows.append({"group": g, "period": period, **fb[period]})
    if not rows:
        return pd.DataFrame(columns=["group", "period", "asset_growth", "gross_profit", "costs", "visits"])
    return pd.DataFrame(rows).groupby(["group", "period"], sort=False).mean().reset_index()


@fixed_style
def early_late_figure(
    metrics: Sequence[dict[str, Any]], groups: Sequence[str], path: str | Path, *, currency: str
) -> Path:
    """(a) Late against early daily asset growth per group; (b) gross profit and costs per day, early and late.

    `currency`: the runs' worlds' (the axes' unit).
    """
    path = Path(path)
    table = early_late_table(metrics, groups)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.2))
    wide = table.pivot(index="group", columns="period", values="asset_growth") if len(table) else pd.DataFrame()
    if {"early", "late"} <= set(wide.columns):
        wide = wide.dropna()
        for i, (g, row) in enumerate(wide.iterrows()):
            ax1.scatter(row["early"], row["late"], color=COLORS[i % len(COLORS)], s=40, label=str(g), zorder=3)
        if len(wide):
            lo = float(min(wide.min().min(), 0.0))
            hi = float(max(wide.max().max(), 0.0))
            pad = 0.05 * (hi - lo or 1.0)
            ax1.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="black", lw=0.8, ls="--", label="no change")
        ax1.legend(fontsize=8)
    else:
        ax1.text(0.5, 0.5, "run too short for both periods", ha="center", va="center", transform=ax1.transAxes)
    ax1.set(xlabel=f"early daily asset growth ({currency}/day)", ylabel=f"late daily asset growth ({currency}/day)")
    ax1.set_title("(a) Daily asset growth, early vs late", fontsize=10)
    ax1.grid(alpha=0.3)
    if len(table):
        labels = [f"{r.group}\n{r.period}" for r in table.itertuples()]
        x = np.arange(len(table))
        ax2.bar(x - 0.2, table["gross_profit"], width=0.4, label="gross profit", color="#4c72b0")
        ax2.bar(
            x + 0.2, table["costs"], width=0.4, label="costs (rent, fees, visits, fines, write-offs)", color="#dd8452"
        )
        ax2.set_xticks(x)
        ax2.set_xticklabels(labels, fontsize=7)
        ax2.legend(fontsize=8)
    ax2.set(ylabel=f"{currency} per day")
    ax2.set_title("(b) Gross profit and costs per day", fontsize=10)
    ax2.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    return save_png(fig, path)


def visit_share(daily: pd.DataFrame, n_machines: int, window: int = VISIT_WINDOW) -> pd.Series:
    """Share of the machines visited per day, as a trailing `window`-day mean (fewer days at the start).

    A visit cycle of several days makes the daily share jump between 0 and 1; the mean shows the rate.
    """
    return (daily["visits"] / n_machines).rolling(window, min_periods=1).mean()


@fixed_style
def operations_figure(run: RunData, path: str | Path) -> Path:
    """One run's days: gross profit and costs per day (7-day means), its shelf fill and visit rate (7-day mean)."""
    path = Path(path)
    d = run.daily
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7.5, 5.5), sharex=True)
    gp = d["gross_profit"].rolling(7, min_periods=1).mean()
    costs = (d["gross_profit"] - d["net"]).rolling(7, min_periods=1).mean()
    ax1.plot(d["day"], gp, label="gross profit (7-day mean)", color="#4c72b0")
    ax1.plot(d["day"], costs, label="costs (7-day mean)", color="#dd8452")
    ax1.set(ylabel=f"{run.world.economics.currency} per day")
    ax1.legend(fontsize=8)
    ax1.grid(alpha=0.3)
    cap = float(run.world.machines["capacity"].sum())
    ax2.plot(d["day"], d["shelf_units"] / cap, label="shelf units / capacity", color="#55a868")
    ax2.plot(
        d["day"],
        visit_share(d, run.world.n_machines),
        label=f"machines visited (share, {VISIT_WINDOW}-day mean)",
        color="#8172b3",
    )
    ax2.set(xlabel="day", ylabel="share")
    ax2.legend(fontsize=8)
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    return save_png(fig, path)

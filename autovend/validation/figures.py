"""Validation figures, drawn only from the plot-data tables (so they regenerate without a replay)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from autovend.png import fixed_style, save_png  # noqa: E402

PLOT_FILES = {
    "weekly": "weekly.csv",
    "subcategory": "subcategory.csv",
    "scores": "scores.csv",
    "comparisons": "comparisons.csv",
    "level_backtest": "level_backtest.csv",
}
FIGURES = ("weekly.png", "subcategory.png", "comparisons.png")


@fixed_style
def weekly_figure(weekly: pd.DataFrame, path: Path) -> None:
    """(a) Simulated against realised weekly sales per machine, with the identity line."""
    fig, ax = plt.subplots(figsize=(5.5, 5.5))
    err = np.vstack([weekly["simulated"] - weekly["simulated_p05"], weekly["simulated_p95"] - weekly["simulated"]])
    ax.errorbar(
        weekly["realised"],
        weekly["simulated"],
        yerr=err,
        fmt="o",
        ms=3,
        alpha=0.45,
        elinewidth=0.6,
        color="#4c72b0",
        label="machine-week (5-95% over seeds)",
    )
    hi = float(max(weekly["realised"].max(), weekly["simulated_p95"].max())) * 1.05
    ax.plot([0, hi], [0, hi], color="black", lw=1, ls="--", label="identity")
    ax.set(
        xlim=(0, hi),
        ylim=(0, hi),
        xlabel="realised weekly sales",
        ylabel="simulated weekly sales (mean over seeds)",
        title="(a) Weekly sales per machine, test window",
    )
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    save_png(fig, path)


@fixed_style
def subcategory_figure(sub: pd.DataFrame, path: Path, other_share: float = 0.005) -> None:
    """(b) Realised and simulated subcategory shares; subcategories under `other_share` pooled into Other."""
    small = sub["realised_share"] < other_share
    shown = sub[~small].sort_values("realised_share", ascending=False, kind="stable")
    if small.any():
        other = pd.DataFrame(
            {
                "category_l2": ["Other"],
                "realised_share": [sub.loc[small, "realised_share"].sum()],
                "simulated_share": [sub.loc[small, "simulated_share"].sum()],
                "simulated_share_sd": [float(np.sqrt((sub.loc[small, "simulated_share_sd"] ** 2).sum()))],
            }
        )
        shown = pd.concat([shown, other], ignore_index=True)
    x = np.arange(len(shown))
    fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(shown) + 2), 4.5))
    ax.bar(x - 0.2, shown["realised_share"], width=0.4, label="realised", color="#55a868")
    ax.bar(
        x + 0.2,
        shown["simulated_share"],
        width=0.4,
        yerr=shown["simulated_share_sd"],
        label="simulated",
        color="#4c72b0",
        error_kw={"elinewidth": 0.8},
    )
    ax.set_xticks(x, shown["category_l2"], rotation=60, ha="right", fontsize=8)
    ax.set(ylabel="share of units", title="(b) Subcategory shares, test window")
    ax.legend()
    fig.tight_layout()
    save_png(fig, path)


@fixed_style
def comparisons_figure(comp: pd.DataFrame, path: Path) -> None:
    """(c) Model minus each reference and control per metric, with 95% intervals; zero is 'no difference'."""
    metrics = [m for m in ("wape", "wape_product", "tvd", "spearman", "crps") if m in set(comp["metric"])]
    others = list(dict.fromkeys(comp["against"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(3.2 * len(metrics) + 1.5, 0.42 * len(others) + 1.6), sharey=True)
    axes = np.atleast_1d(axes)
    colours = {"True": "#2a9d55", "False": "#c44e52", "nan": "#8c8c8c", "None": "#8c8c8c"}
    y = np.arange(len(others))
    for ax, metric in zip(axes, metrics, strict=True):
        sub = comp[comp["metric"] == metric].set_index("against").reindex(others)
        for i, (_, row) in enumerate(sub.iterrows()):
            if not np.isfinite(row["difference"]):
                continue
            colour = colours[str(row["better"])]
            lo, hi = row["ci_low"], row["ci_high"]
            if np.isfinite(lo) and np.isfinite(hi):
                ax.plot([lo, hi], [i, i], color=colour, lw=2)
            ax.plot([row["difference"]], [i], "o", color=colour, ms=5)
        ax.axvline(0, color="black", lw=0.8)
        better = "higher" if metric == "spearman" else "lower"
        ax.set_title(f"{metric}\n(model {better} is better)", fontsize=9)
        ax.tick_params(axis="x", labelsize=8)
    axes[0].set_yticks(y, others, fontsize=8)
    axes[0].invert_yaxis()
    weeks = "resampled" in comp.columns and bool((comp["resampled"] == "weeks").all())
    kind = (
        "circular block bootstrap intervals over weeks (machines held together)"
        if weeks
        else ("machine-cluster bootstrap intervals")
    )
    fig.suptitle(
        f"(c) Model minus reference or control, 95% {kind} "
        "(green: model better, red: worse, grey: not distinguishable)",
        fontsize=9,
    )
    fig.tight_layout()
    save_png(fig, path)


def draw_all(report_dir: str | Path, other_share: float = 0.005) -> list[str]:
    """Draw the figures into `report_dir` from its plots/ tables; returns the PNG names."""
    report_dir = Path(report_dir)
    plots = report_dir / "plots"
    weekly_figure(pd.read_csv(plots / PLOT_FILES["weekly"]), report_dir / "weekly.png")
    subcategory_figure(pd.read_csv(plots / PLOT_FILES["subcategory"]), report_dir / "subcategory.png", other_share)
    comparisons_figure(pd.read_csv(plots / PLOT_FILES["comparisons"]), report_dir / "comparisons.png")
    return list(FIGURES)

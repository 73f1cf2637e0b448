"""Validation figures, drawn only from the plot-data tables (so they regenerate without a replay)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from autovend.png import fixed_style, save_png  # noqa: E402

PLOT_FILES = {"weekly": "weekly.csv", "subcategory": "subcategory.csv", "ablation": "ablation.csv"}


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
def ablation_figure(abl: pd.DataFrame, path: Path) -> None:
    """(c) The ablation and reference table as grouped bars (WAPE, TVD, Spearman)."""
    metrics = [
        ("wape", "machine-week WAPE"),
        ("tvd", "subcategory TVD"),
        ("spearman_median", "median Spearman"),
    ]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8))
    colors = ["#4c72b0", "#8172b2", "#c44e52", "#937860", "#8c8c8c"]
    for ax, (key, label) in zip(axes, metrics, strict=True):
        vals = abl[key].to_numpy(dtype=float)
        ok = np.isfinite(vals)
        ax.barh(np.arange(ok.sum()), vals[ok], color=[colors[i % len(colors)] for i in np.flatnonzero(ok)])
        ax.set_yticks(np.arange(ok.sum()), abl["variant"][ok])
        for i, v in enumerate(vals[ok]):
            ax.text(v, i, f" {v:.3f}", va="center", fontsize=8)
        ax.set_title(label)
        ax.invert_yaxis()
        ax.set_xlim(0, max(vals[ok].max() * 1.25, 0.05) if ok.any() else 1)
    fig.suptitle("(c) Model, ablations and references")
    fig.tight_layout()
    save_png(fig, path)


def draw_all(report_dir: str | Path, other_share: float = 0.005) -> list[str]:
    """Draw the three figures into `report_dir` from its plots/ tables; returns the PNG names."""
    report_dir = Path(report_dir)
    plots = report_dir / "plots"
    weekly_figure(pd.read_csv(plots / PLOT_FILES["weekly"]), report_dir / "weekly.png")
    subcategory_figure(pd.read_csv(plots / PLOT_FILES["subcategory"]), report_dir / "subcategory.png", other_share)
    ablation_figure(pd.read_csv(plots / PLOT_FILES["ablation"]), report_dir / "ablation.png")
    return ["weekly.png", "subcategory.png", "ablation.png"]

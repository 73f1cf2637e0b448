"""Held-out validation on the synthetic operator (the Done-when tests of the issue)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from autovend.calibration.config import CalibrationConfig
from autovend.calibration.panel import build_panel
from autovend.demand import kernel
from autovend.demand.settings import DemandSettings
from autovend.validation.figures import draw_all
from autovend.validation.replay import expected_rates, window_shelves
from autovend.validation.report import write_validation

ROOT = Path(__file__).resolve().parents[2]


def test_model_beats_both_references_on_machine_weeks(synthetic_validation):
    m = synthetic_validation.metrics
    assert m["n_machines"] == 67 and m["n_machine_weeks"] == 67 * 8
    assert m["wape"] < m["wape_persistence"], m
    assert m["wape"] < m["wape_naive"], m


def test_subcategory_mix_beats_naive_and_needs_popularity(synthetic_validation):
    m = synthetic_validation.metrics
    assert m["tvd"] < m["tvd_naive"]
    assert m["ablation_uniform_popularity"]["tvd"] > m["tvd"]


def test_total_volume_within_two_percent(synthetic_validation):
    assert abs(synthetic_validation.metrics["volume_error"]) <= 0.02


def test_every_figure_has_its_spread_over_seeds(synthetic_validation):
    m = synthetic_validation.metrics
    for key in ("volume_error", "wape", "tvd", "spearman_median"):
        assert m[f"{key}_seed_sd"] > 0
        assert m[f"{key}_seed_p05"] <= m[f"{key}_seed_mean"] <= m[f"{key}_seed_p95"]


def test_parameters_are_reestimated_before_the_window(synthetic_validation, synthetic_calibration):
    cal = synthetic_validation.calibration
    assert cal.scalars["params"]["until"] == synthetic_validation.metrics["test_start"] == "2024-10-06"
    assert cal.scalars["period"][1] == "2024-10-05"
    assert cal.scalars["u"] != synthetic_calibration.scalars["u"]


def test_replay_rates_are_the_kernel_on_the_recorded_shelf(synthetic_source, synthetic_validation):
    """One machine-day by hand: the replay's expected demand equals the kernel on that shelf."""
    cfg = CalibrationConfig()
    panel = build_panel(synthetic_source, cfg)
    settings = DemandSettings()
    m0 = int(np.flatnonzero(panel.machines["has_inventory"])[0])
    start = panel.n_days - 56
    sh = window_shelves(panel, settings, start, np.array([m0]), 0.5)
    cal = synthetic_validation.calibration
    ids, skus = panel.machines["machine_id"].to_numpy(), panel.products["sku_id"].to_numpy()
    b = cal.base_attraction(list(cal.machines["machine_id"])).reindex(index=ids, columns=skus).fillna(0).to_numpy()
    U = cal.machines.set_index("machine_id")["U"].reindex(ids).fillna(0).to_numpy()
    cap = panel.machines["capacity"].to_numpy(float)
    rates = expected_rates(sh, b, U, settings, cap)
    day = sh.d == 3
    q = np.zeros(panel.n_products)
    q[sh.k[day]] = sh.q[day]
    env = np.ones(panel.n_products)
    env[sh.k[day]] = sh.env[day]
    w = kernel.attraction(b[m0], q, cap[m0], eta=settings.eta, phi=settings.phi, env=env)
    np.testing.assert_allclose(rates[day], kernel.product_rates(w, U[m0])[sh.k[day]], rtol=1e-9)


def test_figures_regenerate_from_plot_data_alone(tmp_path, synthetic_validation):
    out = tmp_path / "val"
    write_validation(synthetic_validation, out, "synthetic-cn")
    for png in out.glob("*.png"):
        png.unlink()
    assert draw_all(out) == ["weekly.png", "subcategory.png", "ablation.png"]
    assert all((out / p).stat().st_size > 10_000 for p in ("weekly.png", "subcategory.png", "ablation.png"))
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["wape"] == pytest.approx(synthetic_validation.metrics["wape"])
    weekly = pd.read_csv(out / "plots" / "weekly.csv")
    assert len(weekly) == 67 * 8


@pytest.mark.parametrize("name", ["synthetic-cn", "nj-vending"])
def test_committed_reports_redraw_without_a_replay(tmp_path, name):
    src = ROOT / "reports" / name / "validation"
    assert (src / "validation.md").exists(), f"{src} is committed with the repository"
    shutil.copytree(src, tmp_path / name)
    draw_all(tmp_path / name)
    text = (src / "validation.md").read_text()
    assert "paper" in text and "WAPE" in text

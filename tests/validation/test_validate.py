"""Held-out validation on the synthetic operator (the Done-when tests of the issue)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from autovend.calibration.config import CalibrationConfig
from autovend.calibration.panel import build_panel
from autovend.data.load import load_source
from autovend.data.synth.config import SynthConfig
from autovend.data.synth.generate import synthesize, write_source
from autovend.demand import kernel
from autovend.demand.model import DemandModel, ShockProcess
from autovend.demand.settings import DemandSettings
from autovend.png import png_chunks
from autovend.validation.config import ValidationConfig
from autovend.validation.figures import draw_all
from autovend.validation.replay import expected_rates, window_shelves
from autovend.validation.report import rounded, write_validation
from autovend.validation.validate import validate

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
    model = DemandModel(
        b=b,
        U=U,
        capacity=cap,
        site_types=tuple(panel.machines["site_type"].astype(str)),
        categories=tuple(panel.products["category_l1"].astype(str)),
        settings=settings,
        shock=ShockProcess(sigma=0.5, rho=0.2),
    )
    rates = expected_rates(sh, model)
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
    written = {png.name: png.read_bytes() for png in out.glob("*.png")}
    for png in out.glob("*.png"):
        png.unlink()
    assert draw_all(out) == ["weekly.png", "subcategory.png", "ablation.png"]
    assert all((out / p).stat().st_size > 10_000 for p in ("weekly.png", "subcategory.png", "ablation.png"))
    assert {name: (out / name).read_bytes() for name in written} == written  # the same bytes again
    for data in written.values():
        assert not {b"tEXt", b"zTXt", b"iTXt", b"tIME"} & {kind for kind, _ in png_chunks(data)}
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["wape"] == pytest.approx(synthetic_validation.metrics["wape"], rel=1e-5)
    weekly = pd.read_csv(out / "plots" / "weekly.csv")
    assert len(weekly) == 67 * 8


def test_report_does_not_change_with_the_machine_speed(tmp_path, synthetic_validation):
    """Only the timing differs between the two results; every written file is the same, and holds no timing."""
    assert synthetic_validation.replay_seconds > 0
    assert "replay_seconds" not in synthetic_validation.metrics
    slow = dataclasses.replace(synthetic_validation, replay_seconds=synthetic_validation.replay_seconds * 50 + 7)
    write_validation(synthetic_validation, tmp_path / "a", "synthetic-cn")
    write_validation(slow, tmp_path / "b", "synthetic-cn")
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert len(files) == 9  # metrics.json, validation.md, three figures, three plot tables, the output marker
    for rel in files:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    text = (tmp_path / "a" / "validation.md").read_text()
    assert " s." not in text and "seconds" not in text


def test_metrics_json_floats_have_six_significant_digits(tmp_path, synthetic_validation):
    write_validation(synthetic_validation, tmp_path / "val", "synthetic-cn")
    saved = json.loads((tmp_path / "val" / "metrics.json").read_text())
    m = synthetic_validation.metrics
    assert saved["wape"] == float(f"{m['wape']:.6g}") and saved["wape"] != m["wape"]
    assert saved["train"]["u"] == float(f"{m['train']['u']:.6g}")
    assert saved["ablation_no_shock"]["tvd"] == float(f"{m['ablation_no_shock']['tvd']:.6g}")
    assert saved["n_machines"] == 67 and saved["source_hash"] == m["source_hash"]  # ints and text unchanged


def test_rounded_keeps_structure_and_non_finite_values():
    value = {"a": 0.123456789, "b": [1234567.89, 2], "c": {"d": float("nan")}, "e": True, "f": "x"}
    out = rounded(value, digits=3)
    assert out["a"] == 0.123 and out["b"] == [1230000.0, 2] and out["e"] is True and out["f"] == "x"
    assert math.isnan(out["c"]["d"])


@pytest.mark.parametrize("name", ["synthetic-cn", "nj-vending"])
def test_committed_reports_redraw_without_a_replay(tmp_path, name):
    src = ROOT / "reports" / name / "validation"
    assert (src / "validation.md").exists(), f"{src} is committed with the repository"
    shutil.copytree(src, tmp_path / name)
    draw_all(tmp_path / name)
    text = (src / "validation.md").read_text()
    assert "paper" in text and "WAPE" in text


def test_the_model_beats_every_reference_and_says_so(tmp_path, synthetic_validation):
    m = synthetic_validation.metrics
    assert {k: c["model_beats_reference"] for k, c in m["references"].items()} == {
        "wape_vs_persistence": True,
        "wape_vs_naive": True,
        "tvd_vs_naive": True,
        "tvd_vs_uniform_popularity": True,
    }
    assert m["beats_all_references"] is True and m["not_computed"] == {}
    summary = m["references"]["wape_vs_naive"]["summary"]
    assert (
        summary == f"The model's machine-week WAPE ({m['wape']:.3f}) beats the naive reference ({m['wape_naive']:.3f})."
    )
    write_validation(synthetic_validation, tmp_path / "val", "synthetic-cn")
    text = (tmp_path / "val" / "validation.md").read_text()
    assert "## Against the references" in text and "The model beats every reference on this source." in text
    assert "## Not computed" not in text


@pytest.fixture(scope="module")
def coffee_only(tmp_path_factory):
    """Three machines (one with inventory records), 120 days, coffee drinks only: one machine is evaluated.

    Returns the validation, its written folder and the warnings raised while validating and writing.
    """
    folder = tmp_path_factory.mktemp("coffee-only")
    cfg = SynthConfig(
        seed=3,
        start=dt.date(2024, 6, 3),
        end=dt.date(2024, 9, 30),
        locations={"worksite/canteen": 2, "office/office_building": 1},
        n_with_inventory=1,
        target_units=3000,
    )
    write_source(synthesize(cfg), folder / "src", folder / "truth")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = validate(
            load_source(folder / "src"),
            CalibrationConfig(keep_subcategories=["coffee_drinks"]),
            ValidationConfig(seeds=5),
        )
        write_validation(res, folder / "val", "coffee-only")
    return res, folder / "val", caught


def test_a_model_that_loses_to_the_references_says_so(coffee_only):
    res, out, _ = coffee_only
    m = res.metrics
    assert m["n_machines"] == 1 and m["wape"] > m["wape_naive"] and m["wape"] > m["wape_persistence"]
    assert m["references"]["wape_vs_naive"]["model_beats_reference"] is False
    assert m["references"]["wape_vs_persistence"]["model_beats_reference"] is False
    assert m["tvd"] == m["tvd_naive"] == 0.0  # one subcategory: every prediction has its mix
    assert m["references"]["tvd_vs_naive"]["model_beats_reference"] is False
    assert m["beats_all_references"] is False
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["references"]["wape_vs_naive"]["model_beats_reference"] is False
    assert saved["beats_all_references"] is False
    text = (out / "validation.md").read_text()
    assert "**The model does not beat 4 of the 4 references on this source.**" in text
    lost = (
        f"- The model's machine-week WAPE ({m['wape']:.3f}) does not beat the naive reference ({m['wape_naive']:.3f})."
    )
    assert lost in text
    assert "- The model's subcategory TVD ties with the naive reference (0.000): it does not beat it." in text


def test_a_metric_that_cannot_be_computed_is_null_with_its_reason_and_no_numpy_warning(coffee_only):
    res, out, caught = coffee_only
    assert [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)] == []
    m = res.metrics
    assert math.isnan(m["spearman_median"]) and math.isnan(m["spearman_median_seed_p95"])

    def no_constants(name):
        raise AssertionError(f"metrics.json holds {name}")

    saved = json.loads((out / "metrics.json").read_text(), parse_constant=no_constants)
    assert saved["spearman_median"] is None and saved["spearman_median_seed_mean"] is None
    assert saved["ablation_uniform_popularity"]["spearman_median"] is None
    reason = (
        "no machine with at least 5 products on its test-window shelves whose realised and simulated sales both vary"
    )
    assert saved["not_computed"] == {
        "spearman_median": reason,
        "ablation_no_shock.spearman_median": reason,
        "ablation_uniform_popularity.spearman_median": reason,
        "estimators.structural.spearman_median": reason,
        "estimators.paper.spearman_median": reason,
    }
    text = (out / "validation.md").read_text()
    assert "| median within-machine Spearman | not computed | not computed | 0.577 |" in text
    assert f"- `spearman_median`: {reason}" in text
    assert "| paper | " in text and text.count("| not computed |") >= 3  # the estimators' Spearman too
    assert not re.search(r"\bnan\b", text, flags=re.IGNORECASE)


def test_validation_notes_what_the_training_calibration_could_not_identify(coffee_only):
    res, out, _ = coffee_only
    assert res.calibration.scalars["u_source"] == "fallback" and res.calibration.scalars["rho"] == 0.0
    notes = "\n".join(res.notes)
    assert "training calibration: u is borrowed: the no-purchase weight u needs at least 2 machines" in notes
    assert "training calibration: rho is estimated, weak: at its lower bound 0" in notes
    assert "training calibration: rho is estimated, weak" in (out / "validation.md").read_text()


def test_both_estimators_are_scored_on_the_same_held_out_weeks(tmp_path, synthetic_validation):
    """The structural row is the model's own scores; the paper row comes from its own training calibration."""
    m = synthetic_validation.metrics
    est = m["estimators"]
    assert list(est) == ["structural", "paper"]
    for key in ("volume_error", "wape", "tvd", "spearman_median", "wape_seed_mean"):
        assert est["structural"][key] == m[key], key
    for key in ("u", "x", "e", "r", "sigma"):
        assert est["structural"][key] == m["train"][key], key
    assert est["paper"]["e"] != est["structural"]["e"] and est["paper"]["r"] != est["structural"]["r"]
    assert 0 < est["paper"]["wape"] < 1 and abs(est["paper"]["volume_error"]) < 0.5
    assert est["paper"]["wape"] != m["wape"]
    write_validation(synthetic_validation, tmp_path / "val", "synthetic-cn")
    text = (tmp_path / "val" / "validation.md").read_text()
    assert "## Estimators on the same held-out weeks" in text
    row = next(line for line in text.splitlines() if line.startswith("| paper |"))
    assert f"| {est['paper']['wape']:.3f} |" in row
    saved = json.loads((tmp_path / "val" / "metrics.json").read_text())
    assert set(saved["estimators"]) == {"structural", "paper"}


def test_the_paper_estimator_is_scored_where_u_is_borrowed(coffee_only):
    """One coffee machine with inventory: the structural u is borrowed (the paper's u) and e = u / (u + x) is near
    1, while the paper's estimator takes e from the log-log slope; both are scored on the same machine-weeks."""
    res, _, _ = coffee_only
    est = res.metrics["estimators"]
    assert est["structural"]["e"] > 0.9 and 0 < est["paper"]["e"] < 0.5
    assert est["paper"]["x"] == est["structural"]["x"]  # u borrowed: both take x over all machine-days
    assert est["paper"]["wape"] != est["structural"]["wape"]
    assert not any("could not calibrate" in n for n in res.notes)

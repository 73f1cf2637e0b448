import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from autovend.data.check import check_source
from autovend.data.synth.catalog import KEPT_SUBCATEGORIES
from autovend.data.synth.config import DEFAULT_LOCATIONS, SynthConfig
from autovend.data.synth.generate import synthesize, write_source

PAPER_UNITS = 220_128


def test_headline_figures(synthetic_dirs, synthetic_source):
    src = synthetic_source
    machines = src.machines
    assert len(machines) == 99
    assert machines["location"].value_counts().to_dict() == DEFAULT_LOCATIONS
    by_site = machines["site_type"].value_counts().to_dict()
    assert by_site == {"worksite": 28, "commercial": 27, "residential": 20, "campus": 12, "office": 12}
    assert (machines["capacity"] == 200).all()
    completed = src.orders[src.orders["status"] == "completed"]
    assert completed["ts"].min() >= pd.Timestamp("2024-06-01")
    assert completed["ts"].max() < pd.Timestamp("2024-12-01")
    assert completed["ts"].dt.normalize().nunique() == 183
    units = int(completed["qty"].sum())
    assert abs(units / PAPER_UNITS - 1) <= 0.05, units
    kept = src.products.loc[src.products["category_l2"].isin(KEPT_SUBCATEGORIES), "sku_id"]
    assert len(kept) >= 1372
    assert src.products.loc[src.products["category_l2"].isin(KEPT_SUBCATEGORIES), "category_l2"].nunique() == 18
    share = completed.loc[completed["sku_id"].isin(kept), "qty"].sum() / units
    assert 0.85 <= share <= 0.93, share
    assert src.inventory["machine_id"].nunique() == 67
    # the operator's behaviour shows in the records
    statuses = src.orders["status"].value_counts()
    assert statuses["refunded"] > 0 and statuses["failed"] > 0
    assert (src.orders.groupby("order_id").size() > 1).mean() > 0.05  # multi-line orders
    assert src.products["shelf_life_days"][src.products["category_l2"].isin(KEPT_SUBCATEGORIES)].isin([30, 90]).all()
    off_ref = completed.merge(src.products[["sku_id", "ref_price"]], on="sku_id")
    assert 0.02 < (off_ref["unit_price"] != off_ref["ref_price"]).mean() < 0.3  # some local prices


def test_checker_accepts_the_synthetic_source(synthetic_dirs):
    report = check_source(synthetic_dirs[0])
    assert report.ok, report.format(20)
    assert report.warnings == [], report.format(20)  # nor does any plausibility rule find it odd


def test_truth_is_beside_the_source_and_documented(synthetic_dirs):
    source_dir, truth_dir = synthetic_dirs
    assert not any(p.name.startswith("truth") for p in source_dir.iterdir())
    truth = json.loads((truth_dir / "truth.json").read_text())
    assert truth["r"] == 2.74 and truth["rho"] == 0.21
    assert truth["u"] == pytest.approx(0.0638 * 0.318 / (1 - 0.318))
    assert "canonical" in truth["normalisation"]
    assert 0.04 < truth["x"] < 0.15


def test_no_calibration_module_reads_the_truth():
    pkg = Path(__file__).resolve().parents[2] / "autovend" / "calibration"
    for path in pkg.glob("*.py"):
        text = path.read_text()
        assert "data/truth" not in text and "truth.json" not in text, path.name
        assert "autovend.data.synth" not in text, path.name


def _small() -> SynthConfig:
    return SynthConfig(
        seed=7,
        end=SynthConfig().start + pd.Timedelta(days=27).to_pytimedelta(),
        locations={"worksite/canteen": 3, "office/office_building": 2, "commercial/hotel": 2},
        n_with_inventory=4,
        target_units=3000,
    )


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_same_seed_gives_byte_identical_tables(tmp_path):
    cfg = _small()
    write_source(synthesize(cfg), tmp_path / "a", tmp_path / "ta")
    write_source(synthesize(cfg), tmp_path / "b", tmp_path / "tb")
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    write_source(synthesize(cfg.model_copy(update={"seed": 8})), tmp_path / "c", tmp_path / "tc")
    assert _digest(tmp_path / "a")["orders.csv"] != _digest(tmp_path / "c")["orders.csv"]


def test_a_failed_write_leaves_the_earlier_source(tmp_path, monkeypatch):
    cfg = _small()
    src = synthesize(cfg)
    write_source(src, tmp_path / "s", tmp_path / "t")
    before = _digest(tmp_path / "s")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", boom)
    with pytest.raises(OSError):
        write_source(src, tmp_path / "s", tmp_path / "t")
    assert _digest(tmp_path / "s") == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_reconstructed_shelves_equal_the_true_shelves(synthetic_dirs, synthetic_source):
    """The panel's opening fill of machines with inventory records is exactly the generator's."""
    from autovend.calibration.config import CalibrationConfig
    from autovend.calibration.panel import build_panel

    panel = build_panel(synthetic_source, CalibrationConfig(keep_subcategories=list(KEPT_SUBCATEGORIES)))
    md = panel.machine_days[panel.machine_days["known"]]
    got = pd.DataFrame(
        {
            "machine_id": panel.machines["machine_id"].to_numpy()[md["m"]],
            "date": panel.days["date"].to_numpy()[md["d"]],
            "fill": md["fill"].to_numpy(),
        }
    )
    truth = pd.read_parquet(synthetic_dirs[1] / "daily.parquet")[["machine_id", "date", "fill_open"]]
    both = got.merge(truth, on=["machine_id", "date"])
    assert len(both) == len(got) > 10_000
    np.testing.assert_allclose(both["fill"], both["fill_open"], atol=1e-12)

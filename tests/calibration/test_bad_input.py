"""Bad input: a broken source is refused before any estimate; too little data names what is missing."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from autovend.calibration.calibrate import calibrate
from autovend.calibration.config import CalibrationConfig
from autovend.calibration.panel import build_panel
from autovend.calibration.result import CalibrationResult
from autovend.data.load import load_source
from autovend.data.synth.config import SynthConfig
from autovend.data.synth.generate import synthesize, write_source
from autovend.errors import InsufficientDataError, SourceError
from autovend.pipeline import calibrate as stage


def _source(tmp_path, days: int, locations: dict[str, int], n_inv: int, units: int):
    cfg = SynthConfig(
        seed=3,
        start=dt.date(2024, 6, 3),
        end=dt.date(2024, 6, 3) + dt.timedelta(days=days - 1),
        locations=locations,
        n_with_inventory=n_inv,
        target_units=units,
    )
    write_source(synthesize(cfg), tmp_path / "src", tmp_path / "truth")
    return tmp_path / "src"


def test_a_broken_source_is_refused_before_any_estimate(tmp_path):
    src = _source(tmp_path, 20, {"worksite/canteen": 2}, 1, 400)
    orders = pd.read_csv(src / "orders.csv", dtype=str)
    orders.loc[3, "qty"] = "-2"
    orders.to_csv(src / "orders.csv", index=False)
    with pytest.raises(SourceError, match=r"orders\.csv.*row 4.*qty"):
        stage.run(src, tmp_path / "out", None, None)
    assert not (tmp_path / "out").exists()


def test_one_machine_one_week_names_the_panel_minimum(tmp_path):
    src = load_source(_source(tmp_path, 7, {"worksite/canteen": 1}, 1, 80))
    with pytest.raises(InsufficientDataError, match=r"daily panel needs at least 14 days.*spans 7"):
        calibrate(src)


def test_one_machine_cannot_identify_u(tmp_path):
    src = load_source(_source(tmp_path, 40, {"worksite/canteen": 1}, 1, 600))
    with pytest.raises(InsufficientDataError, match=r"no-purchase weight u needs at least 2 machines"):
        calibrate(src, CalibrationConfig(u_fallback=None))
    res = calibrate(src)  # with the default fallback it runs and says so
    assert res.estimates.u_source == "fallback"
    assert any("paper's u" in n for n in res.estimates.notes)


def test_shocks_need_four_weeks(tmp_path):
    src = load_source(_source(tmp_path, 20, {"worksite/canteen": 2, "office/office_building": 1}, 3, 700))
    with pytest.raises(InsufficientDataError, match=r"shock parameters r and rho need a machine with at least 28"):
        calibrate(src, CalibrationConfig(min_machine_days_u=10))


def test_results_round_trip_through_their_folder(tmp_path, synthetic_calibration):
    synthetic_calibration.write(tmp_path / "cal")
    back = CalibrationResult.read(tmp_path / "cal")
    assert back.estimates.u == synthetic_calibration.estimates.u
    pd.testing.assert_frame_equal(back.machines, synthetic_calibration.machines)
    pd.testing.assert_frame_equal(back.popularity, synthetic_calibration.popularity)
    b1 = back.base_attraction(["SH0001", "SH0002"])
    b0 = synthetic_calibration.base_attraction(["SH0001", "SH0002"])
    pd.testing.assert_frame_equal(b1, b0)
    assert back.estimates.source_hash == synthetic_calibration.estimates.source_hash
    assert len(back.estimates.source_hash) == 64


def _rewrite(src, stem, change):
    frame = pd.read_csv(src / f"{stem}.csv", dtype=str, keep_default_na=False)
    change(frame).to_csv(src / f"{stem}.csv", index=False)


@pytest.mark.slow
def test_a_machine_without_orders_is_left_out_with_a_note(tmp_path):
    src = _source(tmp_path, 40, {"worksite/canteen": 2, "office/office_building": 1}, 2, 900)
    before = calibrate(load_source(src))
    idle = pd.DataFrame([{"machine_id": "MX99", "site_type": "hospital", "location": "", "capacity": "200"}])
    _rewrite(src, "machines", lambda m: pd.concat([m, idle], ignore_index=True))
    after = calibrate(load_source(src))  # used to raise IndexError in attach_sales
    assert "1 machine without any sale of a kept product left out of the calibration: MX99" in after.estimates.notes
    assert list(after.machines["machine_id"]) == ["SH0001", "SH0002", "SH0003"]
    pd.testing.assert_frame_equal(after.machines, before.machines)
    pd.testing.assert_frame_equal(after.popularity, before.popularity)
    assert after.estimates.u == before.estimates.u


def test_a_source_with_one_product_builds_its_panel_and_refuses_an_unidentified_r(tmp_path):
    src = _source(tmp_path, 40, {"worksite/canteen": 2, "office/office_building": 1}, 2, 900)
    orders = pd.read_csv(src / "orders.csv", dtype=str, keep_default_na=False)
    busiest = orders[orders["machine_id"] == "SH0001"]["sku_id"].value_counts().index[0]
    assert set(orders.loc[orders["sku_id"] == busiest, "machine_id"]) == {"SH0001"}  # only SH0001 ever sold it
    for stem in ("orders", "inventory", "products"):
        _rewrite(src, stem, lambda f: f[f["sku_id"] == busiest])
    panel = build_panel(load_source(src), CalibrationConfig())  # used to raise IndexError for the other machines
    assert list(panel.products["sku_id"]) == [busiest]
    assert list(panel.machines["machine_id"]) == ["SH0001"]
    note = "2 machines without any sale of a kept product left out of the calibration: SH0002, SH0003"
    assert note in panel.notes
    # one product on one machine for 35 days varies no more than Poisson noise: r is refused, not written as inf
    with pytest.raises(InsufficientDataError, match=r"r = inf; the overdispersion r is not identified"):
        calibrate(load_source(src))


def test_no_sale_of_a_kept_product_names_keep_subcategories(tmp_path):
    src = _source(tmp_path, 20, {"worksite/canteen": 2}, 1, 400)
    novelty = {"sku_id": "NEW1", "name": "", "category_l1": "snacks", "category_l2": "novelty", "ref_price": "9"}
    _rewrite(src, "products", lambda p: pd.concat([p, pd.DataFrame([novelty])], ignore_index=True))
    with pytest.raises(InsufficientDataError, match=r"no completed order line .* kept subcategories"):
        calibrate(load_source(src), CalibrationConfig(keep_subcategories=["novelty"]))

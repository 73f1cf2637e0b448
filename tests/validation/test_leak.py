"""A forecast never sees what it is scored on: the test window's sales never reach it, whatever the source.

Each source is validated three times: as recorded, with the product labels of the window's order lines
permuted within each machine (which products sold on which day turned into noise; each machine's totals by
product stay about the same, so the product-level scores barely move), and with 40% of the window's
lines deleted (every line of its last day kept, so the window is the same). Every forecast (the model, the
controls and the references) must come out byte for byte the same; the scores may move, since they are
computed on what was really sold. The leaky variants are built from the window's own sales (for sales-only
machines the sales rule's shelves; for inventory machines the paper's reconstruction, the counts less the
window's sales), so they must move: the check can see a leak where there is one.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from autovend.calibration.config import CalibrationConfig, load_calibration_config
from autovend.data.adapters.nj_vending import write_nj_vending
from autovend.data.load import Source, load_source
from autovend.data.synth.config import SynthConfig
from autovend.data.synth.generate import synthesize, write_source
from autovend.validation.config import ValidationConfig, load_validation_config
from autovend.validation.summary import ValidationResult
from autovend.validation.validate import validate
from tests.data.real_csv import REAL_CSV_MISSING, real_csv

pytestmark = pytest.mark.slow  # a module of pipelines, clusters or long episodes

ROOT = Path(__file__).resolve().parents[2]
REAL_CSV = real_csv()
UPPER_BOUND = "sales_rule_upper_bound"
PAPER = "paper_protocol"


def permuted(source: Source, start: dt.date, seed: int = 0) -> Source:
    """The source with the products of the window's order lines shuffled within each machine."""
    orders = source.orders.copy()
    rng = np.random.default_rng(seed)
    window = (orders["ts"] >= pd.Timestamp(start)).to_numpy()
    sku = orders["sku_id"].to_numpy(dtype=object).copy()
    machine = orders["machine_id"].to_numpy(dtype=object)
    for m in np.unique(machine[window]):
        rows = np.flatnonzero(window & (machine == m))
        sku[rows] = sku[rows[rng.permutation(len(rows))]]
    orders["sku_id"] = sku
    return dataclasses.replace(source, orders=orders)


def thinned(source: Source, start: dt.date, share: float = 0.4, seed: int = 1) -> Source:
    """The source without `share` of the window's order lines (those of its last day kept)."""
    orders = source.orders
    rng = np.random.default_rng(seed)
    ts = orders["ts"]
    window = (ts >= pd.Timestamp(start)).to_numpy()
    last_day = (ts.dt.normalize() == ts.max().normalize()).to_numpy()
    drop = window & ~last_day & (rng.random(len(orders)) < share)
    return dataclasses.replace(source, orders=orders[~drop].reset_index(drop=True))


def forecasts(res: ValidationResult) -> dict[str, tuple[bytes, dict[int, float]]]:
    """Every forecast's machine-week samples (or mean) as bytes and its nonzero pair forecasts by pair key."""
    assert res.grid is not None
    out = {}
    for name, f in res.forecasts.items():
        mw = f.mw_seeds if f.mw_seeds is not None else f.mw
        pairs = {int(k): float(v) for k, v in zip(res.grid.pair_key, f.pair, strict=True) if v != 0}
        out[name] = (np.ascontiguousarray(mw).tobytes(), pairs)
    return out


def assert_no_leak(
    run, shelves: str = "pre_window", leaky: str = UPPER_BOUND
) -> tuple[ValidationResult, ValidationResult, ValidationResult]:
    """Validate the source three ways (module docstring) and compare every forecast."""
    base = run(None)
    start = dt.date.fromisoformat(base.provenance["test_start"])
    assert base.verdict["shelves"] == shelves
    shuffled, fewer = run(lambda s: permuted(s, start)), run(lambda s: thinned(s, start))
    ref = forecasts(base)
    assert leaky in ref and len(ref) >= 8
    for other in (shuffled, fewer):
        assert other.provenance["test_end"] == base.provenance["test_end"]
        got = forecasts(other)
        assert set(got) == set(ref)
        for name in ref:
            if name == leaky:
                assert got[name] != ref[name], f"{leaky} must see the window's sales"
            else:
                assert got[name] == ref[name], f"{name} changed with the window's sales"
        assert other.metrics["units_realised"] != base.metrics["units_realised"] or other is shuffled
    return base, shuffled, fewer


@pytest.fixture(scope="module")
def small_sales_only(tmp_path_factory) -> Source:
    folder = tmp_path_factory.mktemp("sales-only")
    cfg = SynthConfig(
        seed=11,
        start=dt.date(2024, 6, 3),
        end=dt.date(2024, 6, 3) + dt.timedelta(days=167),
        locations={
            "worksite/canteen": 3,
            "residential/apartment": 3,
            "commercial/hotel": 3,
            "office/office_building": 2,
        },
        n_with_inventory=0,
        target_units=25_000,
    )
    write_source(synthesize(cfg), folder / "src", folder / "truth")
    return load_source(folder / "src")


def test_no_window_sale_reaches_the_forecast_of_a_sales_only_operator(small_sales_only):
    def run(change):
        src = small_sales_only if change is None else change(small_sales_only)
        return validate(src, config=ValidationConfig(seeds=8, bootstrap=200), estimators=("structural",))

    base, _, fewer = assert_no_leak(run)
    assert base.metrics["n_machines"] == 11 and base.metrics["n_machines_inventory"] == 0
    assert fewer.metrics["units_realised"] < 0.7 * base.metrics["units_realised"]  # scored on what was sold


@pytest.mark.slow
def test_the_embedded_operator_without_inventory_has_no_leak_and_rejects_wrong_mixes(synthetic_source):
    """The embedded operator with its inventory table removed: no leak, and the fitted product mix beats reversed
    and shuffled popularity on the product-level WAPE with intervals that exclude zero."""
    sales_only = dataclasses.replace(synthetic_source, inventory=None)
    params = ROOT / "params" / "synthetic-cn.yaml"
    cfg = load_validation_config(params).model_copy(update={"seeds": 20, "bootstrap": 500})

    def run(change):
        src = sales_only if change is None else change(sales_only)
        return validate(src, load_calibration_config(params), cfg, estimators=("structural",))

    base, _, _ = assert_no_leak(run)
    assert base.metrics["n_machines"] == 99
    comps = {(c["against"], c["metric"]): c for c in base.verdict["comparisons"]}
    for control in ("reversed_popularity", "shuffled_popularity"):
        c = comps[(control, "wape_product")]
        assert c["better"] is True and c["ci_high"] < 0, c


@pytest.mark.slow
def test_the_embedded_operator_with_inventory_has_no_leak(synthetic_source):
    """With its inventory records: the machines are simulated from their visits and counts, depleted by the
    model's own sales, so the window's order lines reach no forecast; the paper's reconstruction (counts less
    the window's realised sales) is the variant that must move."""
    params = ROOT / "params" / "synthetic-cn.yaml"
    cfg = load_validation_config(params).model_copy(update={"seeds": 10, "bootstrap": 200})

    def run(change):
        src = synthetic_source if change is None else change(synthetic_source)
        return validate(src, load_calibration_config(params), cfg, estimators=("structural",))

    base, _, _ = assert_no_leak(run, shelves="inventory", leaky=PAPER)
    assert base.metrics["n_machines"] == 67 and base.metrics["n_machines_inventory"] == 67


@pytest.mark.realdata
@pytest.mark.skipif(not REAL_CSV.is_file(), reason=REAL_CSV_MISSING)
def test_the_nj_export_has_no_leak(tmp_path):
    write_nj_vending(REAL_CSV, tmp_path / "nj")
    source = load_source(tmp_path / "nj")
    params = ROOT / "params" / "nj-vending.yaml"
    cfg = load_validation_config(params).model_copy(update={"seeds": 20, "bootstrap": 500})
    cal = load_calibration_config(params)
    assert isinstance(cal, CalibrationConfig)

    def run(change):
        src = source if change is None else change(source)
        return validate(src, cal, cfg, estimators=("structural",))

    base, _, _ = assert_no_leak(run)
    assert base.metrics["n_machines"] == 5

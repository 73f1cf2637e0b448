import dataclasses
import datetime as dt
import hashlib
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from autovend.calibration.estimates import Estimates
from autovend.calibration.result import CalibrationResult
from autovend.canonical import parquet_bytes, round_array
from autovend.cli import app
from autovend.data.hashing import source_hash
from autovend.demand.model import DemandModel
from autovend.demand.settings import DemandSettings, load_demand_settings
from autovend.errors import BundleError, ExportError, OutputExistsError
from autovend.export.build import build_world, export_world
from autovend.export.network import PAPER_NETWORK, paper_devices
from autovend.export.params import load_economics, load_export_params
from autovend.export.ship import unshipped_readme
from autovend.export.source import read_source_tables
from autovend.sim import Simulator
from autovend.world.bundle import (
    BUNDLE_FILES,
    MANIFEST,
    SCHEMA_VERSION,
    load_world,
    read_manifest,
    verify_bundle,
    world_hash,
    write_bundle,
)
from autovend.world.describe import summarize
from autovend.world.model import World

PAPER_DEVICES = [(d.device_id, d.location) for d in paper_devices()]


def export_paper(*args, **kwargs):
    """export_world onto the paper's 20-device network (the shipped network file)."""
    return export_world(*args, network=PAPER_NETWORK, **kwargs)


ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "worlds" / "cn20"
SITES = ("worksite", "campus", "residential", "commercial", "office")
PRODUCTS = [  # sku, l1, l2, ref_price, unit_cost, shelf_life_days, omega
    ("S01", "drinks", "water", 3.0, 1.95, 90, 2.0),
    ("S02", "drinks", "water", 2.5, 1.60, 90, 0.5),
    ("S03", "drinks", "tea", 5.0, 3.25, 365, 1.0),
    ("S04", "drinks", "dairy", 6.0, np.nan, 20, 0.8),
    ("S05", "snacks", "chips", 6.0, 2.70, 90, 1.5),
    ("S06", "snacks", "chips", 8.0, 6.00, np.nan, 0.3),
    ("S07", "snacks", "bread", 4.5, 2.00, 30, 1.2),
    ("S08", "snacks", "nuts", 9.0, 4.05, 180, 0.0),
]


def write_small_inputs(folder: Path) -> tuple[Path, Path]:
    """A source folder (4 machines per Appendix A sub-location) and a hand-made calibration of it.

    In each sub-location the first three machines are preferred (structural fit, 120 days); the
    fourth has too few days (even sub-locations) or a sales-rule scale (odd ones).
    """
    src, cal = folder / "source", folder / "calibration"
    src.mkdir(parents=True)
    locations = list(dict.fromkeys(loc for _, loc in PAPER_DEVICES))
    machines = pd.DataFrame(
        [
            (f"M{4 * i + j + 1:03d}", loc.split("/")[0], loc, 150 if j == 2 else 200)
            for i, loc in enumerate(locations)
            for j in range(4)
        ],
        columns=["machine_id", "site_type", "location", "capacity"],
    )
    products = pd.DataFrame(
        [(p[0], f"Product {p[0]}", p[1], p[2], p[3], p[4], p[5]) for p in PRODUCTS],
        columns=["sku_id", "name", "category_l1", "category_l2", "ref_price", "unit_cost", "shelf_life_days"],
    )
    products["shelf_life_days"] = products["shelf_life_days"].astype("Int64")
    orders = pd.DataFrame(
        {
            "order_id": ["o1"],
            "machine_id": ["M001"],
            "sku_id": ["S01"],
            "ts": ["2024-06-01T08:00:00"],
            "qty": [1],
            "unit_price": [3.0],
        }
    )
    meta = {
        "name": "tiny-cn",
        "currency": "CNY",
        "timezone": "Asia/Shanghai",
        "country": "CN",
        "description": "t",
    }
    (src / "source.yaml").write_text(yaml.safe_dump(meta))
    machines.to_csv(src / "machines.csv", index=False)
    products.to_csv(src / "products.csv", index=False)
    orders.to_csv(src / "orders.csv", index=False)

    n = len(machines)
    kappa = 1.0 + 0.25 * np.arange(n)
    R = 40.0 * kappa
    calibration = CalibrationResult(
        estimates=Estimates(
            schema_version=1,
            source_hash=source_hash(src),
            source_name="tiny-cn",
            settings=DemandSettings().model_dump(mode="json"),
            params={"em_rounds": 4},
            u=0.03,
            x=0.0638,
            e=0.318,
            r=2.74,
            sigma=0.55,
            rho=0.2,
            eta=0.5,
            phi=5.0,
            typical_fill=0.5,
        ),
        popularity=pd.DataFrame(
            {
                "sku_id": [p[0] for p in PRODUCTS],
                "category_l1": [p[1] for p in PRODUCTS],
                "category_l2": [p[2] for p in PRODUCTS],
                "omega": [p[6] for p in PRODUCTS],
            }
        ),
        site_preference=pd.DataFrame(
            [
                (s, c, 1.0 + 0.1 * i - (0.2 if c == "snacks" else 0.0))
                for i, s in enumerate(SITES)
                for c in ("drinks", "snacks")
            ],
            columns=["site_type", "category_l1", "pi"],
        ),
        subcategory=pd.DataFrame(
            {
                "category_l2": ["water", "tea", "dairy", "chips", "bread", "nuts"],
                "category_l1": ["drinks", "drinks", "drinks", "snacks", "snacks", "snacks"],
                "gamma": [1.5, 1.0, 0.7, 1.2, 0.9, 0.6],
            }
        ),
        machines=pd.DataFrame(
            {
                "machine_id": machines["machine_id"],
                "site_type": machines["site_type"],
                "capacity": machines["capacity"].astype(float),
                "kappa": kappa,
                "R": R,
                "U": 0.03 * R,
                "n_days": np.where((np.arange(n) % 4 == 3) & (np.arange(n) % 8 < 4), 30, 120),
                "kappa_source": np.where(np.arange(n) % 8 == 7, "sales_rule", "structural_fit"),
            }
        ),
    )
    calibration.write(cal)
    return cal, src


@pytest.fixture(autouse=True)
def _raise_on_float_errors():
    old = np.seterr(all="raise")
    yield
    np.seterr(**old)


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(calibration, source, exported bundle) of the small inputs."""
    folder = tmp_path_factory.mktemp("small")
    cal, src = write_small_inputs(folder)
    export_paper(cal, src, folder / "worlds" / "tiny20")
    return cal, src, folder / "worlds" / "tiny20"


@pytest.fixture()
def bundle_copy(small, tmp_path) -> Path:
    target = tmp_path / "tiny20"
    shutil.copytree(small[2], target)
    return target


def assert_worlds_equal(a: World, b: World) -> None:
    for f in dataclasses.fields(World):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, pd.DataFrame):
            pd.testing.assert_frame_equal(x, y, check_exact=True)
        elif isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y)
        elif isinstance(x, DemandModel):
            assert x.equals(y), f.name
        else:
            assert x == y, f.name


def test_round_trip_loads_the_world_that_was_exported(small, tmp_path):
    cal, src, _ = small
    res = export_paper(cal, src, tmp_path / "tiny20")
    loaded = load_world(tmp_path / "tiny20")
    assert_worlds_equal(loaded, res.world)
    content = {k: v for k, v in res.manifest["files"].items() if k != "README.md"}
    assert loaded.world_hash == res.manifest["world_hash"] == world_hash(content)
    assert len(loaded.world_hash) == 64


def test_bundle_holds_the_calibrated_numbers(small):
    cal_dir, _, path = small
    cal = CalibrationResult.read(cal_dir)
    w = load_world(path)
    assert w.name == "tiny20"
    assert list(zip(w.machines["device_id"], w.machines["location"], strict=True)) == list(PAPER_DEVICES)
    assert Counter(w.machines["site_type"]) == {
        "worksite": 6,
        "campus": 2,
        "residential": 4,
        "commercial": 6,
        "office": 2,
    }
    assert (w.machines["capacity"] == 200).all()  # even where the source machine held 150
    src_ids = w.machines["source_machine_id"].tolist()
    b = cal.base_attraction(src_ids).to_numpy()
    np.testing.assert_array_equal(w.demand_model.b, round_array(b))  # canonical: 6 significant digits
    np.testing.assert_allclose(w.demand_model.b, b, rtol=5e-6)
    # b = kappa * pi * gamma * omega, checked by hand for CN_WORKSITE_01 and S01 (water, drinks)
    k0 = cal.machines.set_index("machine_id").loc[src_ids[0], "kappa"]
    assert w.demand_model.b[0, 0] == pytest.approx(k0 * 1.0 * 1.5 * 2.0)
    assert w.demand_model.b[0, 7] == 0.0  # omega 0
    mach = cal.machines.set_index("machine_id").loc[src_ids]
    np.testing.assert_array_equal(w.demand_model.U, round_array(mach["U"].to_numpy()))
    np.testing.assert_array_equal(w.machines["kappa"], round_array(mach["kappa"].to_numpy()))
    # only preferred machines (the first three of each sub-location), each from its own sub-location
    assert all((int(m[1:]) - 1) % 4 != 3 for m in src_ids)
    assert (w.machines["source_location"] == w.machines["location"]).all()
    assert (w.demand_model.shock.sigma, w.demand_model.shock.rho) == (0.55, 0.2)
    assert w.demand_model.settings == DemandSettings()
    assert w.catalog["sku_id"].tolist() == [p[0] for p in PRODUCTS]
    assert set(w.catalog["shelf_life_days"]) == {30, 90}


def test_horizon_weather_forecast_and_calendar(small):
    w = load_world(small[2])
    assert (w.start_date, w.horizon_days, w.timezone, w.country) == (
        dt.date(2025, 1, 1),
        180,
        "Asia/Shanghai",
        "CN",
    )
    dates = pd.to_datetime(w.weather["date"])
    assert dates.iloc[0] == pd.Timestamp("2025-01-01") and dates.iloc[-1] == pd.Timestamp("2025-07-07")
    assert len(w.weather) == 188
    assert sorted(w.forecast["lead"].unique()) == list(range(8))
    lead0 = w.forecast[w.forecast["lead"] == 0].set_index("target_date")
    wx = w.weather.set_index("date")
    np.testing.assert_array_equal(lead0.loc[wx.index, "t_max_c"], wx["t_max_c"])
    cal = w.calendar.set_index("date")
    assert cal.index[0] == pd.Timestamp("2025-01-01") and cal.index[-1] == pd.Timestamp("2026-09-08")
    assert len(cal) == 180 + 400 + 35 + 1
    assert (
        cal.loc["2025-01-01", "day_type"] == "holiday" and cal.loc["2025-01-01", "holiday_name"] == "New Year's Day"
    )  # the library's default language
    assert bool(cal.loc["2025-01-26", "is_workday"])  # a Sunday made a workday for the Spring Festival
    assert cal.loc["2025-01-29", "day_type"] == "holiday"


def test_manifest_lists_every_file_with_its_hash(small):
    m = verify_bundle(small[2])
    assert m["schema_version"] == SCHEMA_VERSION == 2
    assert m["canonical_digits"] == 6
    assert sorted(m["files"]) == sorted(BUNDLE_FILES)
    assert m["created_by"].startswith("autovend ")
    assert m["params"]["export"]["seed"] == 20250101
    assert m["params"]["calibration"] == {"em_rounds": 4}
    assert m["source_hash"] == source_hash(small[1])
    assert len(m["calibration_hash"]) == 64
    assert sorted(p.name for p in small[2].iterdir()) == sorted([*BUNDLE_FILES, MANIFEST])


def test_export_is_byte_identical_when_repeated(small, tmp_path):
    cal, src, first = small
    export_paper(cal, src, tmp_path / "tiny20")
    for name in [*BUNDLE_FILES, MANIFEST]:
        assert (tmp_path / "tiny20" / name).read_bytes() == (first / name).read_bytes(), name


# what the tiny inputs gave when export read the calibration as a dict of scalars (before `Estimates` was passed)
TINY_CALIBRATION_JSON_SHA256 = "2b344cca586123b046d3add51b6fbdeb3a39f6732118b7646e9daf11208ce2da"
TINY_WORLD_HASH = "36c80842daf0c116469c0e6ef9acc44eda2b5fab898af64c49ad0e3c37c19f23"
TINY_CALIBRATION_HASH = "597392e1178a97a5b21641a7d1e148a0cb78f2fc9b98056f05a0d00b8d1f6c58"


def test_export_from_estimates_gives_the_bundle_of_the_scalar_dict(small):
    """calibration.json written from `Estimates` and the bundle exported from it: the bytes of before."""
    cal, _, bundle = small
    assert hashlib.sha256((cal / "calibration.json").read_bytes()).hexdigest() == TINY_CALIBRATION_JSON_SHA256
    manifest = read_manifest(bundle)
    assert (manifest["world_hash"], manifest["calibration_hash"]) == (TINY_WORLD_HASH, TINY_CALIBRATION_HASH)


def test_export_takes_the_estimates_in_memory_or_read_back(small):
    """The world built from a calibration in memory is the world built from its folder (Estimates read back)."""
    cal, src, _ = small
    in_memory = CalibrationResult.read(cal)
    in_memory = dataclasses.replace(in_memory, estimates=Estimates(**in_memory.estimates.stored()))
    source, params = read_source_tables(src), load_export_params(None)
    demand, economics = load_demand_settings(None), load_economics(None)
    a = build_world(in_memory, source, "tiny20", params, demand, economics)
    b = build_world(CalibrationResult.read(cal), source, "tiny20", params, demand, economics)
    assert_worlds_equal(a, b)


def test_another_seed_changes_the_world_and_its_hash(small, tmp_path):
    cal, src, first = small
    params = tmp_path / "params.yaml"
    params.write_text("export:\n  seed: 7\n")
    res = export_paper(cal, src, tmp_path / "tiny20", params_path=params)
    assert res.manifest["world_hash"] != read_manifest(first)["world_hash"]
    assert res.manifest["params"]["export"]["seed"] == 7


def flip_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def bump_schema(path: Path) -> None:
    m = json.loads(path.read_text())
    m["schema_version"] = SCHEMA_VERSION + 1
    path.write_text(json.dumps(m))


def edit_world_hash(path: Path) -> None:
    m = json.loads(path.read_text())
    m["world_hash"] = "0" * 64
    path.write_text(json.dumps(m))


def nudge_one_b(path: Path) -> None:
    """One base attraction moved by one ulp, the file otherwise rewritten as it was."""
    table = pd.read_parquet(path)
    table.loc[3, "b"] = np.nextafter(table.loc[3, "b"], np.inf)
    path.write_bytes(parquet_bytes(table))


def edit_params(path: Path) -> None:
    m = json.loads(path.read_text())
    m["params"]["export"]["seed"] = 1
    path.write_text(json.dumps(m))


@pytest.mark.parametrize(
    ("file", "damage", "message"),
    [
        pytest.param("base_attraction.parquet", flip_byte, r"base_attraction.parquet was changed", id="flipped-byte"),
        pytest.param(
            "README.md",
            lambda p: p.write_text(p.read_text() + "\nnote\n"),
            r"README.md was changed",
            id="readme",
        ),
        pytest.param("settings.json", Path.unlink, r"partial: settings.json missing", id="deleted-file"),
        pytest.param(MANIFEST, Path.unlink, r"has no manifest.json", id="no-manifest"),
        pytest.param(MANIFEST, bump_schema, r"schema 3, newer .* upgrade AutoVend", id="newer-schema"),
        pytest.param(MANIFEST, lambda p: p.write_text("{not json"), r"not readable JSON", id="bad-json"),
        pytest.param(MANIFEST, edit_params, r"manifest_hash does not match", id="edited-manifest"),
        pytest.param(MANIFEST, edit_world_hash, r"world_hash does not match", id="edited-world-hash"),
        pytest.param("base_attraction.parquet", nudge_one_b, r"base_attraction.parquet was changed", id="one-ulp"),
        pytest.param("extra.csv", lambda p: p.write_text("x\n"), r"does not list: extra.csv", id="extra-file"),
    ],
)
def test_a_damaged_bundle_is_refused_with_a_clear_message(bundle_copy, file, damage, message):
    damage(bundle_copy / file)
    with pytest.raises(BundleError, match=message) as err:
        load_world(bundle_copy)
    assert "AutoVend" in str(err.value) or "export" in str(err.value) or "remove" in str(err.value)


def test_no_bundle_at_all(tmp_path):
    with pytest.raises(BundleError, match="no world bundle"):
        load_world(tmp_path / "nothing")


def test_export_refuses_a_source_the_calibration_was_not_made_from(small, tmp_path):
    cal, src, _ = small
    other = tmp_path / "source"
    shutil.copytree(src, other)
    (other / "orders.csv").write_text((other / "orders.csv").read_text().replace("M001", "M002"))
    with pytest.raises(ExportError, match="content hash .* pass the source the calibration was made from"):
        export_paper(cal, other, tmp_path / "w")
    assert not (tmp_path / "w").exists()


def test_export_refuses_other_demand_settings(small, tmp_path):
    cal, src, _ = small
    settings = tmp_path / "benchmark.yaml"
    settings.write_text("demand:\n  phi: 4.0\n")
    with pytest.raises(ExportError, match=r"differ .*\['phi'\]"):
        export_paper(cal, src, tmp_path / "w", settings_path=settings)


def test_export_replaces_a_bundle_but_not_another_folder(small, tmp_path):
    cal, src, _ = small
    out = tmp_path / "w"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(OutputExistsError, match="--force"):
        export_paper(cal, src, out)
    assert (out / "notes.txt").read_text() == "mine"
    export_paper(cal, src, out, force=True)
    export_paper(cal, src, out)  # now a bundle: replaced without --force
    assert not (out / "notes.txt").exists()
    verify_bundle(out)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_cli_export_world_into_foreign_folders(small, tmp_path):
    """export-world -o: a bundle is recognised by its manifest; other folders are refused and kept."""
    cal, src, _ = small
    runner = CliRunner()
    out = tmp_path / "w"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    res = runner.invoke(app, ["export-world", str(cal), str(src), "-o", str(out)])
    assert isinstance(res.exception, OutputExistsError)
    assert f"output folder {out} is not empty and holds no world output; choose another folder, or pass --force" in str(
        res.exception
    )
    assert _files(out) == {"notes.txt": b"mine"}
    res = runner.invoke(app, ["export-world", str(cal), str(src), "-o", str(out), "--force"])
    assert res.exit_code == 0, res.output
    bundle = _files(out)
    assert sorted(bundle) == sorted([*BUNDLE_FILES, MANIFEST])  # no output marker: the manifest recognises it
    (out / "catalog.parquet").write_bytes(b"edited")
    res = runner.invoke(app, ["export-world", str(cal), str(src), "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert _files(out) == bundle  # its own earlier bundle is replaced, the edited file written again
    (out / "notes.txt").write_text("mine")
    res = runner.invoke(app, ["export-world", str(cal), str(src), "-o", str(out)])
    assert isinstance(res.exception, OutputExistsError) and "did not write there: notes.txt" in str(res.exception)
    assert (out / "notes.txt").read_text() == "mine"
    # a calibration folder (its marker names another kind) is no bundle, and an input is never replaced
    res = runner.invoke(app, ["export-world", str(cal), str(src), "-o", str(cal)])
    assert isinstance(res.exception, OutputExistsError) and "contains the input" in str(res.exception)
    res = runner.invoke(app, ["export-world", str(cal), str(src), "-o", str(cal.parent), "--force"])
    assert isinstance(res.exception, OutputExistsError) and "contains the input" in str(res.exception)
    other = tmp_path / "cal"
    CalibrationResult.read(cal).write(other)
    res = runner.invoke(app, ["export-world", str(cal), str(src), "-o", str(other)])
    assert isinstance(res.exception, OutputExistsError) and "holds no world output" in str(res.exception)
    assert (other / "calibration.json").is_file()


def test_export_replaces_a_bundle_of_an_older_schema(small, tmp_path):
    cal, src, _ = small
    out = tmp_path / "tiny20"
    shutil.copytree(small[2], out)
    manifest = json.loads((out / MANIFEST).read_text())
    (out / MANIFEST).write_text(json.dumps({**manifest, "schema_version": 1}))
    with pytest.raises(BundleError, match="has bundle schema 1, older than"):
        load_world(out)
    export_world(cal, src, out)  # recognised by its manifest all the same: re-exported without --force
    assert read_manifest(out)["schema_version"] == SCHEMA_VERSION
    verify_bundle(out)


def test_a_failed_bundle_write_keeps_the_earlier_bundle(small, tmp_path):
    out = tmp_path / "tiny20"
    shutil.copytree(small[2], out)
    before = _files(out)
    manifest = read_manifest(out)
    with pytest.raises(FileNotFoundError):  # the second file cannot be written: the block fails midway
        write_bundle(out, {"README.md": b"new", "missing/catalog.parquet": b""}, manifest)
    assert _files(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["tiny20"]


def test_simulator_runs_on_a_loaded_bundle(small):
    world = load_world(small[2])
    sim = Simulator(world, seed=0)
    assert sim.cash == pytest.approx(39_920.0)  # day 1: 40,000 less the 80 daily fee (Appendix A.2)
    accepted = sim.place_order([{"sku_id": "S01", "qty": 40}, {"sku_id": "S05", "qty": 40}])
    assert accepted.all_accepted
    cost = 40 * (1.95 + 2.70)  # both unit costs kept from the source
    assert sim.cash == pytest.approx(39_920.0 - cost)
    for _ in range(6):
        sim.end_day()
    assert sim.day == 7
    units = sim.warehouse_units()
    assert units.sum() == 80  # both orders arrived (lead times are at most 6 days)


def test_summary_of_a_bundle(small):
    w = load_world(small[2])
    s = summarize(w, read_manifest(small[2]))
    assert s["bundle"]["name"] == "tiny20"
    assert s["horizon"] == {
        "start": "2025-01-01",
        "end": "2025-06-29",
        "days": 180,
        "timezone": "Asia/Shanghai",
        "country": "CN",
        "calendar_end": "2026-09-08",
    }
    assert {k: len(v) for k, v in s["sources_by_site"].items()} == dict(zip(SITES, (6, 2, 4, 6, 2), strict=True))
    assert s["catalog"]["by_category"] == {"drinks": 4, "snacks": 4}
    assert s["holidays"][0] == ("2025-01-01", "New Year's Day", False)
    assert ("2025-01-26", "makeup workday", True) in s["holidays"]
    assert s["demand"]["eta"] == 0.5 and s["demand"]["phi"] == 5.0


def test_cli_export_and_info(small, tmp_path):
    cal, src, _ = small
    runner = CliRunner()
    out = tmp_path / "worlds" / "tiny20"
    res = runner.invoke(app, ["export-world", str(cal), str(src), "-o", str(out), "--network", str(PAPER_NETWORK)])
    assert res.exit_code == 0, res.output
    assert "wrote" in res.output and "20 devices, 8 products" in res.output
    res = runner.invoke(app, ["world", "info", str(out)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "tiny20: verified" in res.output and "worksite" in res.output and "New Year" in res.output
    catalog = pd.read_parquet(out / "catalog.parquet")
    catalog.loc[0, "ref_price"] += 0.01  # one fen more: another world
    (out / "catalog.parquet").write_bytes(parquet_bytes(catalog))
    res = runner.invoke(app, ["world", "info", str(out)])
    assert isinstance(res.exception, BundleError) and "catalog.parquet was changed" in str(res.exception)


def test_cli_export_takes_a_shipped_network_by_name_in_any_folder(small, tmp_path, monkeypatch):
    cal, src, _ = small
    monkeypatch.chdir(tmp_path)
    by_file = tmp_path / "by-file" / "tiny20"
    res = CliRunner().invoke(
        app, ["export-world", str(cal), str(src), "-o", str(by_file), "--network", str(PAPER_NETWORK)]
    )
    assert res.exit_code == 0, res.output
    by_name = tmp_path / "by-name" / "tiny20"
    res = CliRunner().invoke(app, ["export-world", str(cal), str(src), "-o", str(by_name), "--network", "paper-cn20"])
    assert res.exit_code == 0, res.output
    assert read_manifest(by_name) == read_manifest(by_file)  # the same file, the same world and provenance
    assert "export-world" in res.output and "100%" in res.output and "ETA" in res.output  # its progress bar
    res = CliRunner().invoke(app, ["export-world", str(cal), str(src), "-o", str(tmp_path / "x"), "--network", "paper"])
    assert "no network file 'paper'" in str(res.exception) and "(shipped: paper-cn20)" in str(res.exception)


def test_export_reports_its_steps(small, tmp_path):
    from autovend.progress import listening

    cal, src, _ = small
    seen: list[tuple[str, float]] = []
    with listening(lambda what, done: seen.append((what, done))):
        export_world(cal, src, tmp_path / "tiny20", network=PAPER_NETWORK)
    assert [what for what, _ in seen] == [
        "export-world: read the calibration",
        "export-world: read the source",
        "export-world: build the world",
        "export-world: tables and README",
        "export-world: manifest",
        "export-world: write the bundle",
        "export-world",
    ]
    assert [done for _, done in seen] == sorted(done for _, done in seen) and seen[-1][1] == 1.0


def test_cli_errors_exit_2(small, tmp_path, monkeypatch, capsys):
    import sys

    from autovend.cli import main

    monkeypatch.setattr(sys, "argv", ["autovend", "world", "info", str(tmp_path / "missing")])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "does not exist: it is neither a bundle" in err


# ------------------------------------------------------------------ the real synthetic calibration


@pytest.fixture(scope="module")
def real(tmp_path_factory, synthetic_dirs, synthetic_calibration):
    """The default pipeline's world, exported from the session's synthetic source and its calibration."""
    base = tmp_path_factory.mktemp("real")
    synthetic_calibration.write(base / "calibration")
    out = base / "cn20"
    params, settings = ROOT / "params" / "synthetic-cn.yaml", ROOT / "params" / "benchmark.yaml"
    res = export_paper(base / "calibration", synthetic_dirs[0], out, params, settings)
    return res, out


def test_real_export_matches_the_paper(real):
    res, out = real
    w = res.world
    assert (w.n_machines, w.n_products) == (20, 1372)
    assert w.catalog["category_l2"].nunique() == 18
    assert (w.machines["kappa_source"] == "structural_fit").all()
    margin = 1 - w.catalog["unit_cost"] / w.catalog["ref_price"]
    drinks = w.catalog["category_l1"] == "drinks"
    assert margin[drinks].between(0.30 - 1e-9, 0.40 + 1e-9).all()
    assert margin[~drinks].between(0.50 - 1e-9, 0.60 + 1e-9).all()
    assert set(w.catalog["shelf_life_days"]) == {30, 90}
    assert 0.4 < w.demand_model.shock.sigma < 0.8 and 0.1 < w.demand_model.shock.rho < 0.3
    size = sum(p.stat().st_size for p in out.iterdir())
    assert size < 2 * 1024 * 1024


def test_real_bundle_runs_in_the_simulator(real):
    world = load_world(real[1])
    sim = Simulator(world, seed=1)
    sku = world.catalog["sku_id"].iloc[0]
    assert sim.place_order([{"sku_id": sku, "qty": 20}]).all_accepted
    for _ in range(3):
        sim.end_day()
    assert sim.day == 4


def test_content_not_writer_bytes_makes_the_hash(bundle_copy):
    """Tables rewritten by another writer (snappy, pandas metadata, other row groups) keep their hashes."""
    before = verify_bundle(bundle_copy)
    for name in ("base_attraction.parquet", "machines.parquet", "calendar.parquet"):
        table = pd.read_parquet(bundle_copy / name)
        old_bytes = (bundle_copy / name).read_bytes()
        table.to_parquet(bundle_copy / name, compression="snappy", row_group_size=7)
        assert (bundle_copy / name).read_bytes() != old_bytes
    settings = json.loads((bundle_copy / "settings.json").read_text())
    (bundle_copy / "settings.json").write_text(json.dumps(settings))  # compact, unsorted
    assert verify_bundle(bundle_copy)["world_hash"] == before["world_hash"]
    assert load_world(bundle_copy).world_hash == before["world_hash"]


@pytest.mark.skipif(not (COMMITTED / MANIFEST).is_file(), reason="no committed worlds/cn20")
def test_committed_bundle_verifies_and_is_reproducible(real):
    """The session's own pipeline run (synth -> calibrate -> export) rebuilds worlds/cn20's content exactly."""
    committed = load_world(COMMITTED)
    assert committed.name == "cn20" and committed.n_machines == 20
    manifest = read_manifest(COMMITTED)
    res, out = real
    assert manifest["calibration_hash"] == res.manifest["calibration_hash"], (
        "worlds/cn20 is stale: the pipeline no longer reproduces its calibration; run `dvc repro` and commit it"
    )
    assert {k: v for k, v in manifest["files"].items() if k != "README.md"} == {
        k: v for k, v in res.manifest["files"].items() if k != "README.md"
    }
    assert manifest["world_hash"] == res.manifest["world_hash"] == committed.world_hash
    # the shipped README adds the verdict and the Results section (autovend world ship) to the exported one
    shipped = unshipped_readme((COMMITTED / "README.md").read_text())
    assert shipped == (out / "README.md").read_text().rstrip("\n")


FIRST_CALL = """
import json, sys
from autovend.session import ToolSession
from autovend.world.bundle import load_world

session = ToolSession(load_world("worlds/cn20"), seed=1)
assert session.call("get_calendar", {}).ok
print("MODULES " + json.dumps(sorted(sys.modules)))
session.close()
"""
# what loading a world for play does not need before its first tool call: the dataset layer of pyarrow (a bundle's
# tables are single Parquet files), the holiday library (the calendar is in the bundle) and YAML (no params file)
NOT_BEFORE_FIRST_CALL = ("pyarrow.dataset", "holidays", "yaml")


def test_loading_a_world_to_its_first_tool_call_leaves_dataset_holidays_and_yaml_unimported():
    proc = subprocess.run([sys.executable, "-c", FIRST_CALL], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    modules = json.loads(next(x for x in proc.stdout.splitlines() if x.startswith("MODULES ")).removeprefix("MODULES "))
    assert {"autovend.world.bundle", "autovend.session", "pyarrow.parquet", "pandas"} <= set(modules)
    loaded = [m for m in modules if any(m == e or m.startswith(e + ".") for e in NOT_BEFORE_FIRST_CALL)]
    assert loaded == []

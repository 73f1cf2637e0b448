"""The identified set (`autovend.world.ranges`) written at export, and worlds drawn from it (`autovend.world.draws`,
`autovend world draw`): seeded, hashed, listed, within the ranges, the same on any machine."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from autovend.calibration.result import CalibrationResult
from autovend.canonical import round_sig
from autovend.cli import app
from autovend.errors import BundleError
from autovend.export.ship import ship_world
from autovend.rng import stream
from autovend.world.bundle import load_world, read_manifest, verify_bundle
from autovend.world.derive import write_derived
from autovend.world.draws import draw_world, write_draws
from autovend.world.ranges import U_OPEN_FACTOR, read_ranges
from autovend.world.runcopy import identity_hash
from autovend.world.scenario import load_scenario

from .test_bundle import export_paper, write_small_inputs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    """The small test world exported from a calibration whose u has the interval [0.02, open)."""
    folder = tmp_path_factory.mktemp("ranges")
    cal, src = write_small_inputs(folder)
    result = CalibrationResult.read(cal)
    est = result.estimates.model_copy(update={"u_interval": (0.02, None), "u_identified": False})
    CalibrationResult(**{**result.__dict__, "estimates": est}).write(cal)
    export_paper(cal, src, folder / "tiny20")
    return folder / "tiny20"


def test_export_writes_the_identified_set_into_the_manifest_and_not_into_the_world(bundle):
    manifest = read_manifest(bundle)
    ranges = read_ranges(manifest, str(bundle))
    assert ranges.u is not None and (ranges.u.value, ranges.u.low, ranges.u.high) == (0.03, 0.02, None)
    assert ranges.u.identified is False and ranges.u.draw_range() == (0.02, 0.03 * U_OPEN_FACTOR)
    assert (ranges.elasticity.low, ranges.elasticity.high) == (2.4, 3.5) and "2.4 and 3.5" in ranges.elasticity.why
    world = load_world(bundle)
    # S04 has no unit cost (drawn in its band) and S06 no shelf life: both borrowed; costs of every category listed
    cat = world.catalog.set_index("sku_id")
    assert cat.loc["S04", "unit_cost_source"] == "margin_draw" and set(ranges.margins) == {"drinks", "snacks"}
    assert (ranges.margins["drinks"].low, ranges.margins["drinks"].high) == (0.3, 0.4)
    assert ranges.shelf_life_factor is not None
    # devices mapped onto 150-unit source machines get the export capacity (200): a setting
    borrowed = set(ranges.borrowed_capacity)
    assert borrowed and ranges.capacity_factor is not None
    assert borrowed < set(world.machines["device_id"])
    # provenance only: the world hash is the content's, whatever the ranges say
    assert manifest["world_hash"] == identity_hash(world.replace(world_hash=""))


def test_ship_and_derive_keep_the_ranges(bundle, tmp_path):
    shipped = ship_world(bundle, tmp_path / "shipped")
    assert shipped["ranges"] == read_manifest(bundle)["ranges"]
    base = load_world(bundle)
    _, manifest = write_derived(bundle, base, load_scenario("fee-rise"), tmp_path / "derived")
    assert manifest["ranges"] == read_manifest(bundle)["ranges"]
    verify_bundle(tmp_path / "derived")


def test_draws_are_seeded_hashed_listed_and_the_same_whatever_n(bundle, tmp_path):
    base, manifest = load_world(bundle), read_manifest(bundle)
    ranges = read_ranges(manifest, "b")
    a = write_draws(bundle, base, manifest, ranges, 4, 11, tmp_path / "a")
    b = write_draws(bundle, base, manifest, ranges, 2, 11, tmp_path / "b")
    c = write_draws(bundle, base, manifest, ranges, 2, 12, tmp_path / "c")
    hashes = [d["world_hash"] for d in a["draws"]]
    assert [d["world_hash"] for d in b["draws"]] == hashes[:2]
    assert not set(d["world_hash"] for d in c["draws"]) & set(hashes)
    assert len(set(hashes)) == 4 and base.world_hash not in hashes
    listing = json.loads((tmp_path / "a" / "draws.json").read_text())
    assert listing["seed"] == 11 and listing["base"]["world_hash"] == base.world_hash
    for d in listing["draws"]:
        folder = tmp_path / "a" / d["name"]
        verify_bundle(folder)
        assert load_world(folder).world_hash == d["world_hash"]
        assert read_manifest(folder)["params"]["draw"]["index"] == d["index"]


def test_a_draw_stays_in_the_ranges_and_changes_only_what_is_borrowed(bundle):
    base = load_world(bundle)
    ranges = read_ranges(read_manifest(bundle), "b")
    for index in (1, 2, 3):
        world, values = draw_world(base, ranges, 5, index)
        # u: log-uniform in [0.02, 0.12] from the draw's own uniform, 4 significant digits, every U scaled alike
        x = stream(5, "world_draw", index, "u").random()
        assert values["u"] == round_sig(0.02 * (0.12 / 0.02) ** x, 4)
        np.testing.assert_allclose(world.demand_model.U, base.demand_model.U * values["u"] / 0.03, rtol=1e-5)
        e = world.demand_model.settings.elasticity
        assert all(2.4 <= e[s] <= 3.5 for s in e) and e["campus"] == values["elasticity"]["campus"]
        caps = dict(zip(world.machines["device_id"], world.machines["capacity"], strict=True))
        old = dict(zip(base.machines["device_id"], base.machines["capacity"], strict=True))
        for d, cap in caps.items():
            if d in ranges.borrowed_capacity:
                assert cap % 10 == 0 and 0.75 * old[d] - 5 <= cap <= 1.25 * old[d] + 5
            else:
                assert cap == old[d]
        cat, cat0 = world.catalog.set_index("sku_id"), base.catalog.set_index("sku_id")
        drawn = cat0["unit_cost_source"] == "margin_draw"
        assert sorted(cat0.index[drawn]) == ["S04", "S06"]  # no cost, and a cost above the band's
        margin = 1 - cat.loc[drawn, "unit_cost"] / cat.loc[drawn, "ref_price"]
        band = {"drinks": (0.3, 0.4), "snacks": (0.5, 0.6)}
        for sku, m in margin.items():
            lo, hi = band[cat.loc[sku, "category_l1"]]
            assert lo - 0.005 <= m <= hi + 0.005
        assert (cat.loc[~drawn, "unit_cost"] == cat0.loc[~drawn, "unit_cost"]).all()
        own = cat0["shelf_life_source"].isin(["source", "mapped"])
        assert (cat.loc[own, "shelf_life_days"] == cat0.loc[own, "shelf_life_days"]).all()
        shift = values["lead_shift_days"]
        assert -1 <= shift <= 2
        want = {}
        for lead, p in base.economics.lead_time_pmf.items():
            want[max(1, lead + shift)] = round(want.get(max(1, lead + shift), 0.0) + p, 9)
        assert {k: round(v, 9) for k, v in world.economics.lead_time_pmf.items()} == want
        np.testing.assert_array_equal(world.demand_model.b, base.demand_model.b)
        assert world.weather.equals(base.weather) and world.calendar.equals(base.calendar)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the SIMD switches named are x86's")
def test_the_same_seed_gives_the_same_hashes_without_numpys_simd_kernels(bundle, tmp_path):
    """numpy picks SIMD kernels by CPU at run time; draws made with all of them switched off must hash the same."""
    runner = CliRunner()
    res = runner.invoke(app, ["world", "draw", str(bundle), "--n", "3", "--seed", "8", "-o", str(tmp_path / "here")])
    assert res.exit_code == 0, res.output
    env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR", "OPENBLAS_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "autovend.cli", "world", "draw", str(bundle), "--n", "3", "--seed", "8"]
    done = subprocess.run([*cmd, "-o", str(tmp_path / "there")], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    here = json.loads((tmp_path / "here" / "draws.json").read_text())
    there = json.loads((tmp_path / "there" / "draws.json").read_text())
    assert [d["world_hash"] for d in here["draws"]] == [d["world_hash"] for d in there["draws"]]


def test_a_world_without_ranges_is_refused_in_words(tmp_path):
    """A bundle written without the export (here a toy world) records no identified set to draw from."""
    from autovend.world.bundle import make_manifest, world_files, write_bundle
    from autovend.world.toy import toy_world

    world = toy_world(2, 6, seed=0)
    files = world_files(world)
    files["README.md"] = b"# a toy world, written without the export\n"
    write_bundle(tmp_path / "toy", files, make_manifest(world, files, "toy", "toy", {}))
    res = CliRunner().invoke(
        app, ["world", "draw", str(tmp_path / "toy"), "--n", "2", "--seed", "1", "-o", str(tmp_path / "x")]
    )
    assert res.exit_code != 0
    assert isinstance(res.exception, BundleError) and "records no identified set" in str(res.exception)
    assert not (tmp_path / "x").exists()


def test_the_shipped_worlds_record_their_identified_sets():
    """The shipped worlds carry the ranges export writes: cn20 with its estimated u interval, nj5 with u not
    identified (its profile interval, which the paper's fallback value lies above) and borrowed capacities."""
    cn20 = read_ranges(read_manifest(ROOT / "worlds" / "cn20"), "cn20")
    nj5 = read_ranges(read_manifest(ROOT / "worlds" / "nj5"), "nj5")
    assert cn20.u.identified and cn20.u.estimated and cn20.u.low < cn20.u.value < cn20.u.high
    assert (cn20.u.low, cn20.u.high) == (0.0276815, 0.0309441) and cn20.capacity_factor is None
    assert not nj5.u.identified and nj5.u.high < nj5.u.value  # the fallback lies above the data's interval
    assert nj5.capacity_factor is not None and (nj5.capacity_factor.low, nj5.capacity_factor.high) == (0.75, 1.25)

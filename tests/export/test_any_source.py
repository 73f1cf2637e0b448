"""Any operator's records become a world: check -> calibrate -> validate -> export-world -> a baseline run.

Two sources that the paper's network could never take, each through the command line with no code
change: one whose machines stand at site types of its own (hospital, school), one with two sales-only
machines in US dollars. Both are cut from a small synthetic operator (so they calibrate to something),
then relabelled as an operator's export would be.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from autovend.cli import app
from autovend.world.bundle import load_world

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = ROOT / "params" / "benchmark.yaml"


def _params(folder: Path) -> Path:
    params = yaml.safe_load((ROOT / "params" / "synthetic-cn.yaml").read_text())
    params["synthesize"].update(
        {
            "end": "2024-08-19",  # 80 days
            "target_units": 9000,
            "n_with_inventory": 6,
            "locations": {"worksite/canteen": 3, "campus/university": 3, "residential/apartment": 3},
        }
    )
    params["validate"].update({"test_weeks": 2, "seeds": 5, "min_machine_days": 7})
    params["export"] = {"seed": 7, "start": "2025-03-01", "min_days": 30}
    path = folder / "params.yaml"
    path.write_text(yaml.safe_dump(params, sort_keys=False))
    return path


def invoke(*args: str) -> str:
    res = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    assert res.exit_code == 0, f"autovend {' '.join(map(str, args))} failed:\n{res.output}\n{res.exception!r}"
    return res.output


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("any-source")
    params = _params(base)
    invoke("synth", "-o", base / "synthetic", "--truth", base / "truth", "--params", params, "--settings", SETTINGS)
    return base / "synthetic", params


def own_site_types(src: Path, out: Path) -> Path:
    """The source with worksite and campus machines relabelled as hospital and school machines."""
    shutil.copytree(src, out)
    machines = pd.read_csv(out / "machines.csv", dtype=str, keep_default_na=False)
    rename = {"worksite": "hospital", "campus": "school"}
    machines["site_type"] = machines["site_type"].replace(rename)
    machines["location"] = [
        f"{rename.get(loc.split('/')[0], loc.split('/')[0])}/{loc.split('/')[1]}" for loc in machines["location"]
    ]
    machines.to_csv(out / "machines.csv", index=False, lineterminator="\n")
    return out


def two_dollar_machines(src: Path, out: Path) -> Path:
    """Two machines of the source, no inventory records, in US dollars in New York; the records cannot tell
    capacities or shelf lives, and the products are made to order."""
    shutil.copytree(src, out)
    machines = pd.read_csv(out / "machines.csv", dtype=str, keep_default_na=False)
    orders = pd.read_csv(out / "orders.csv", dtype=str, keep_default_na=False)
    keep = orders["machine_id"].value_counts().index[:2]
    machines = machines[machines["machine_id"].isin(keep)].assign(capacity="")
    machines.to_csv(out / "machines.csv", index=False, lineterminator="\n")
    products = pd.read_csv(out / "products.csv", dtype=str, keep_default_na=False)
    products.assign(shelf_life_days="").to_csv(out / "products.csv", index=False, lineterminator="\n")
    orders[orders["machine_id"].isin(keep)].to_csv(out / "orders.csv", index=False, lineterminator="\n")
    (out / "inventory.csv").unlink()
    meta = yaml.safe_load((out / "source.yaml").read_text())
    meta.update(
        {
            "name": "two-dollar-machines",
            "currency": "USD",
            "timezone": "America/New_York",
            "country": "US",
            "made_to_order": True,
        }
    )
    (out / "source.yaml").write_text(yaml.safe_dump(meta))
    return out


@pytest.mark.slow
@pytest.mark.parametrize(
    ("make", "site_types", "currency"),
    [
        pytest.param(own_site_types, {"hospital", "school", "residential"}, "CNY", id="own-site-types"),
        pytest.param(two_dollar_machines, None, "USD", id="two-sales-only-machines-in-usd"),
    ],
)
def test_a_source_goes_from_records_to_a_baseline_run(synthetic, tmp_path, make, site_types, currency):
    src_all, params = synthetic
    src = make(src_all, tmp_path / "source")
    common = ["--params", params, "--settings", SETTINGS]
    invoke("check", src, "--params", params)
    invoke("calibrate", src, "-o", tmp_path / "cal", "--report", tmp_path / "cal-report", *common)
    invoke("validate", src, "-o", tmp_path / "validation", *common)
    if currency == "USD":  # a US world: a named climate must be of the world's country (copied params are refused)
        us = yaml.safe_load(Path(params).read_text())
        us["export"]["climate"] = "NewYork"
        (tmp_path / "us.yaml").write_text(yaml.safe_dump(us, sort_keys=False))
        common = ["--params", tmp_path / "us.yaml", "--settings", SETTINGS]
    invoke("export-world", tmp_path / "cal", src, "-o", tmp_path / "worlds" / "mine", *common)
    world = load_world(tmp_path / "worlds" / "mine")
    machines = pd.read_csv(src / "machines.csv", dtype=str)
    assert world.n_machines == len(machines)  # every machine of the source is a device
    assert sorted(world.machines["device_id"]) == sorted(machines["machine_id"])
    assert world.economics.currency == currency
    if site_types is not None:
        assert set(world.machines["site_type"]) == site_types
    readme = (tmp_path / "worlds" / "mine" / "README.md").read_text()
    assert "### Borrowed (not identified by this source)" in readme
    assert "structural estimator" in readme and "## Price response" in readme
    if currency == "USD":
        assert "converted from CNY to USD" in readme
        u_line = next(line for line in readme.splitlines() if line.startswith("- no-purchase weight u"))
        assert "weak" in u_line or "borrowed" in u_line  # no inventory records: u rests on sales-rule shelves
        assert world.country == "US" and world.timezone == "America/New_York"
        # what the records cannot tell is marked as a setting, not an estimate
        borrowed = readme.split("### Borrowed (not identified by this source)")[1].split("###")[0]
        # made to order: ingredient stock that does not expire (tests/export/test_made_to_order.py), so no shelf lives
        assert "- made to order (source.yaml `made_to_order`): the records know no stock" in borrowed
        assert "ingredient stock, not unlimited" in borrowed and "shelf lives of" not in borrowed
        assert "- capacity of 2 of 2 devices (200 units): a setting" in borrowed
        assert "order lead times, restock visits" in borrowed
        verdict = json.loads((tmp_path / "validation" / "verdict.json").read_text())
        assert verdict["shelves"] == "pre_window"
        assert "made to order" in (tmp_path / "validation" / "validation.md").read_text()
    else:
        assert "use the pooled `unknown` ones: hospital, school" in readme
    invoke(
        "run", "--world", tmp_path / "worlds" / "mine", "--agent", "baseline", "--days", 10, "--out", tmp_path / "run"
    )
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["days_played"] == 10 if "days_played" in metrics else True
    assert (tmp_path / "run" / "report.md").is_file()

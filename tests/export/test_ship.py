"""Shipping a world: the README gains the validation and the baseline results; the world stays the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autovend.cli import app
from autovend.errors import ExportError
from autovend.export.ship import ship_world
from autovend.world.bundle import load_world, read_manifest
from autovend.world.catalogue import find_worlds
from tests.world.test_bundle import export_paper, write_small_inputs


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ship")
    cal, src = write_small_inputs(folder)
    export_paper(cal, src, folder / "data" / "tiny20")
    return folder / "data" / "tiny20"


def fake_run(folder: Path, seed: int, net_assets: float, world_hash: str, days: int = 180) -> Path:
    """A run folder as far as shipping reads it: metrics.json with the run's identity and headline numbers."""
    folder.mkdir(parents=True)
    metrics = {
        "run": {"seed": seed, "world_hash": world_hash, "days": days, "horizon_days": 180, "agent": "baseline"},
        "net_assets": net_assets,
        "assortment": 0.5,
        "waste_rate": 0.1,
        "pricing_regret": 12.5,
        "shelf_utilization": 0.8,
    }
    (folder / "metrics.json").write_text(json.dumps(metrics))
    return folder


VALIDATION = {
    "test_weeks": 8,
    "test_start": "2024-10-06",
    "test_end": "2024-11-30",
    "n_machines": 67,
    "seeds": 100,
    "volume_error": -0.0042,
    "wape": 0.203,
    "wape_persistence": 0.320,
    "wape_naive": 0.291,
    "tvd": 0.0093,
    "tvd_naive": 0.198,
    "spearman_median": 0.923,
}


def test_shipping_adds_results_and_keeps_the_world(bundle, tmp_path):
    h = read_manifest(bundle)["world_hash"]
    runs = [fake_run(tmp_path / f"s{s}", s, a, h) for s, a in ((2, 110.0), (1, 100.0), (3, 120.0))]
    (tmp_path / "metrics.json").write_text(json.dumps(VALIDATION))
    manifest = ship_world(bundle, tmp_path / "worlds" / "tiny20", validation=tmp_path / "metrics.json", runs=runs)
    out = tmp_path / "worlds" / "tiny20"
    assert manifest["world_hash"] == h == load_world(out).world_hash
    readme = (out / "README.md").read_text()
    assert "| machine-week WAPE | 0.203 | persistence 0.320, naive 0.291 |" in readme
    assert readme.index("| 1 | 100.00 |") < readme.index("| 2 | 110.00 |") < readme.index("| 3 | 120.00 |")
    assert "Mean 110.00 CNY, standard deviation 10.00." in readme
    # shipping again (new results) replaces the section instead of adding a second one
    ship_world(out, tmp_path / "again", runs=runs[:1])
    assert (tmp_path / "again" / "README.md").read_text().count("## Results") == 1


def test_runs_of_another_world_or_unfinished_ones_are_refused(bundle, tmp_path):
    h = read_manifest(bundle)["world_hash"]
    with pytest.raises(ExportError, match="not on this world"):
        ship_world(bundle, tmp_path / "a", runs=[fake_run(tmp_path / "x", 1, 1.0, "f" * 64)])
    with pytest.raises(ExportError, match="played 30 of 180 days"):
        ship_world(bundle, tmp_path / "b", runs=[fake_run(tmp_path / "y", 1, 1.0, h, days=30)])
    with pytest.raises(ExportError, match="repeat a seed"):
        ship_world(bundle, tmp_path / "c", runs=[fake_run(tmp_path / f"z{i}", 1, 1.0, h) for i in range(2)])
    assert not (tmp_path / "a").exists() and not (tmp_path / "c").exists()


def test_world_list_shows_shipped_and_local_worlds(bundle, tmp_path, monkeypatch):
    found = find_worlds([bundle.parent])
    assert [(w.name, w.devices, w.products, w.days, w.currency, w.state) for w in found] == [
        ("tiny20", 20, 8, 180, "CNY", "verified")
    ]
    res = CliRunner().invoke(app, ["world", "list", str(bundle.parent)], env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "tiny20" in res.output and found[0].world_hash[:12] in res.output

"""Shipping a world: the README gains the validation and the baseline results; the world stays the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autovend.cli import app
from autovend.errors import ExportError
from autovend.export.ship import ship_world, unshipped_readme
from autovend.export.validation import read_validation, validation_lines, validation_text, verdict_lines
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


def fake_validation(folder: Path, verdict: str = "not_distinguishable", **metrics_update) -> Path:
    """A validation folder as far as shipping reads it (the files `autovend validate` writes)."""
    folder.mkdir(parents=True)
    metrics = {
        "test_weeks": 8,
        "n_machines": 5,
        "volume_error": 0.214,
        "wape": 0.320,
        "wape_product": 0.956,
        "tvd": 0.022,
        "spearman": 0.329,
        "intervals": {"wape": {"low": 0.238, "high": 0.474}, "volume_error": {"low": 0.108, "high": 0.354}},
        "persistence": {"wape": 0.270, "wape_product": 0.824},
        "naive": {"wape": 0.327, "tvd": 0.178},
        **metrics_update,
    }
    comparisons = [
        {
            "against": "persistence",
            "metric": "wape",
            "model": 0.32,
            "other": 0.27,
            "difference": 0.05,
            "ci_low": -0.004,
            "ci_high": 0.127,
            "better": None,
        },
        {
            "against": "naive",
            "metric": "wape",
            "model": 0.32,
            "other": 0.327,
            "difference": -0.007,
            "ci_low": -0.019,
            "ci_high": 0.003,
            "better": None,
        },
        {
            "against": "persistence",
            "metric": "wape_product",
            "model": 0.956,
            "other": 0.824,
            "difference": 0.132,
            "ci_low": 0.05,
            "ci_high": 0.2,
            "better": None,
            "p_value": 0.0625,
        },
        {
            "against": "reversed_popularity",
            "metric": "wape_product",
            "model": 0.956,
            "other": 1.039,
            "difference": -0.083,
            "ci_low": -0.105,
            "ci_high": -0.05,
            "better": True,
            "p_value": 0.03125,
        },
    ]
    (folder / "metrics.json").write_text(json.dumps(metrics))
    (folder / "verdict.json").write_text(
        json.dumps({"verdict": verdict, "shelves": "pre_window", "comparisons": comparisons})
    )
    (folder / "provenance.json").write_text(json.dumps({"test_start": "2022-11-06", "test_end": "2022-12-31"}))
    return folder


def test_shipping_adds_the_verdict_and_results_and_keeps_the_world(bundle, tmp_path):
    h = read_manifest(bundle)["world_hash"]
    runs = [fake_run(tmp_path / f"s{s}", s, a, h) for s, a in ((2, 110.0), (1, 100.0), (3, 120.0))]
    val = fake_validation(tmp_path / "val")
    manifest = ship_world(bundle, tmp_path / "worlds" / "tiny20", validation=val, runs=runs)
    out = tmp_path / "worlds" / "tiny20"
    assert manifest["world_hash"] == h == load_world(out).world_hash
    readme = (out / "README.md").read_text()
    first = readme.splitlines()[2]
    assert first.startswith("> **Validation verdict: not distinguishable** (pre-window shelves (sales-only records), 5")
    assert "wape against persistence +0.050 [-0.004, +0.127] (not distinguishable)" in first
    assert (
        "wape_product against persistence +0.132 [+0.050, +0.200] (not distinguishable, sign-flip p = 0.0625)" in first
    )
    assert "wape_product against reversed_popularity -0.083 [-0.105, -0.050] (better, sign-flip p = 0.0312)" in first
    assert "| machine-week WAPE | 0.320 | [0.238, 0.474] | 0.270 / 0.327 |" in readme
    assert "| volume error | +21.4% | [+10.8%, +35.4%] | – / – |" in readme
    assert readme.index("| 1 | 100.00 |") < readme.index("| 2 | 110.00 |") < readme.index("| 3 | 120.00 |")
    assert "Mean 110.00 CNY, standard deviation 10.00." in readme
    assert manifest["validation"]["verdict"] == "not_distinguishable"
    key = [(c["against"], c["metric"]) for c in manifest["validation"]["key"]]
    assert key == [
        ("persistence", "wape"),
        ("naive", "wape"),
        ("persistence", "wape_product"),
        ("reversed_popularity", "wape_product"),
    ]
    assert unshipped_readme(readme) == (bundle / "README.md").read_text().rstrip("\n")
    # shipping again (new results, no validation) replaces the verdict and the section instead of adding more
    again = ship_world(out, tmp_path / "again", runs=runs[:1])
    text = (tmp_path / "again" / "README.md").read_text()
    assert text.count("## Results") == 1 and text.count("Validation verdict") == 1
    assert text.splitlines()[2].startswith("> **Validation verdict: none**") and again["validation"] == {
        "verdict": "none"
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"wape": float("nan")}, "wape is nan, not a finite number"),
        ({"test_weeks": None}, "test_weeks is None, not a positive whole number"),
        ({"n_machines": 0}, "n_machines is 0, not a positive whole number"),
        ({"intervals": {"wape": {"low": "x"}}}, "intervals.wape.low is 'x'"),
    ],
)
def test_a_validation_of_nans_or_nonsense_is_refused(bundle, tmp_path, change, message):
    val = fake_validation(tmp_path / "val", **change)
    text = (val / "metrics.json").read_text().replace("NaN", "NaN")
    (val / "metrics.json").write_text(text)
    with pytest.raises(ExportError, match=message):
        ship_world(bundle, tmp_path / "out", validation=val)
    assert not (tmp_path / "out").exists()


def test_an_old_validation_without_a_verdict_is_refused(bundle, tmp_path):
    val = fake_validation(tmp_path / "val")
    (val / "verdict.json").unlink()
    with pytest.raises(ExportError, match="verdict.json is missing.*re-run `autovend validate"):
        ship_world(bundle, tmp_path / "out", validation=val / "metrics.json")
    (val / "verdict.json").write_text(json.dumps({"verdict": "great", "shelves": "inventory", "comparisons": []}))
    with pytest.raises(ExportError, match="verdict 'great' is not one of"):
        ship_world(bundle, tmp_path / "out", validation=val)


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
    assert [(w.name, w.devices, w.products, w.days, w.currency, w.state, w.verdict) for w in found] == [
        ("tiny20", 20, 8, 180, "CNY", "verified", "none")
    ]
    res = CliRunner().invoke(app, ["world", "list", str(bundle.parent)], env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "tiny20" in res.output and found[0].world_hash[:12] in res.output


def test_world_list_and_info_show_the_shipped_verdict(bundle, tmp_path):
    ship_world(bundle, tmp_path / "worlds" / "tiny20", validation=fake_validation(tmp_path / "val", "validated"))
    assert [w.verdict for w in find_worlds([tmp_path / "worlds"])] == ["validated"]
    res = CliRunner().invoke(app, ["world", "list", str(tmp_path / "worlds")], env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "validated" in res.output
    res = CliRunner().invoke(app, ["world", "info", str(tmp_path / "worlds" / "tiny20")], env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    assert "validated (pre-window shelves (sales-only records), 5 machines): wape against persistence +0.050" in (
        " ".join(res.output.split())
    )


ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_worlds_table_states_each_shipped_worlds_verdict():
    """The README's verdicts and intervals are the pipeline's, as shipped in each world's manifest."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    words = {"validated": "validated", "not_distinguishable": "not distinguishable", "worse_than_reference": "worse"}
    for name in ("cn20", "cn99", "nj5"):
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{name}` |"))
        cell = row.split(" | ")[3]
        v = read_manifest(ROOT / "worlds" / name)["validation"]
        assert cell.startswith(words[v["verdict"]]), (name, cell)
        if ":" in cell:  # the intervals are given: they must be the shipped ones
            key = {(c["against"], c["metric"]): c for c in v["key"]}
            for (against, metric), label in (
                (("persistence", "wape"), "WAPE vs persistence"),
                (("naive", "wape"), "vs naive"),
                (("persistence", "wape_product"), "product-level WAPE vs product persistence"),
                (("reversed_popularity", "wape_product"), "vs reversed popularity"),
            ):
                c = key[(against, metric)]
                assert f"{label} {c['difference']:+.3f} [{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]" in cell, (
                    name,
                    label,
                )


def test_a_one_machine_validation_says_its_intervals_are_over_weeks(tmp_path):
    """verdict.json's `resampling` (a one- or two-machine source) reaches the README's lines and the manifest; a
    validation without it keeps the machine-cluster words (and no `resampling` in the manifest)."""
    val = fake_validation(tmp_path / "val", n_machines=1)
    machines = read_validation(val)
    assert "95% machine-cluster bootstrap interval:" in verdict_lines(machines)[0]
    assert "resampling" not in machines.manifest_entry()
    verdict = json.loads((val / "verdict.json").read_text())
    weeks = {"unit": "weeks", "method": "circular_block", "n_weeks": 8, "block_weeks": 2, "resamples": 2000}
    verdict["resampling"] = {**weeks, "min_weeks": 4, "n_machines": 1}
    (val / "verdict.json").write_text(json.dumps(verdict))
    shipped = read_validation(val)
    words = (
        "95% week-bootstrap interval (circular blocks of 2 of the 8 test weeks, the machines held together: it speaks "
        "for this machine only)"
    )
    assert f"Model minus other, {words}: wape against persistence" in verdict_lines(shipped)[0]
    lines = validation_lines(shipped)
    assert "| statistic | model | 95% week-bootstrap interval | persistence / naive |" in lines
    assert lines[-1] == f"Intervals: {words}."
    entry = shipped.manifest_entry()
    assert entry["resampling"] == {"unit": "weeks", "n_weeks": 8, "block_weeks": 2, "resamples": 2000, "n_machines": 1}
    assert validation_text({"validation": entry}).startswith(
        f"not distinguishable (pre-window shelves (sales-only records), 1 machine; {words}): wape against persistence"
    )
    verdict["resampling"] = {"unit": "machines"}
    (val / "verdict.json").write_text(json.dumps(verdict))
    with pytest.raises(ExportError, match="is not a week bootstrap's description"):
        read_validation(val)

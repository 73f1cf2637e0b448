"""`make status`: each stage `dvc status` lists is told apart: not built here, an input missing, or changed."""

from __future__ import annotations

from pathlib import Path

from autovend.pipeline.status import PIPELINES, describe, explain, main, stage_outputs

ROOT = Path(__file__).resolve().parents[2]
MADE = {"data/raw/nj-vending", "data/checks/nj-vending.json", "data/calibration/synthetic-cn"}


def test_unbuilt_stages_missing_inputs_and_changes_are_told_apart():
    status = {
        "pipelines/nj-vending/dvc.yaml:adapt": [
            {"changed deps": {"data/external/vending_machine_sales.csv": "deleted"}},
            {"changed outs": {"data/raw/nj-vending": "not in cache"}},
        ],
        "pipelines/nj-vending/dvc.yaml:check": [
            {"changed deps": {"data/raw/nj-vending": "deleted", "autovend/data/contract.py": "modified"}},
            {"changed outs": {"data/checks/nj-vending.json": "not in cache"}},
        ],
        "pipelines/nj-vending/dvc.yaml:calibrate": [
            "changed command",
            {"changed params": {"params/nj-vending.yaml": {"calibrate.em_rounds": "modified"}}},
        ],
    }
    adapt, check, calibrate = explain(status, MADE)
    assert (adapt.stage, adapt.not_built, adapt.missing_inputs, adapt.changed) == (
        "adapt",
        True,
        ["data/external/vending_machine_sales.csv"],
        [],
    )
    assert check.not_built and check.missing_inputs == [] and check.changed == ["autovend/data/contract.py (modified)"]
    assert not calibrate.not_built
    assert calibrate.changed == ["command", "params params/nj-vending.yaml (calibrate.em_rounds modified)"]
    lines = describe("pipelines/nj-vending/dvc.yaml", "make real-data", [adapt, check, calibrate])
    text = "\n".join(lines)
    assert "needs an input that is not here: data/external/vending_machine_sales.csv" in text
    assert "not built here: adapt, check: their outputs under data/ are not committed" in text
    assert "    check: autovend/data/contract.py (modified)" in lines
    assert describe("dvc.yaml", "make repro", []) == ["dvc.yaml (make repro): up to date"]


def test_the_outputs_of_every_pipeline_are_known_relative_to_the_root():
    made = set().union(*(stage_outputs(ROOT / p, ROOT) for p in PIPELINES))
    assert {"data/raw/synthetic-cn", "data/worlds/cn99", "data/raw/nj-vending", "worlds/nj5"} <= made
    assert "reports/synthetic-cn/validation/metrics.json" in made  # metrics count as outputs too


def test_the_report_names_every_pipeline(capsys):
    main(ROOT)
    out = capsys.readouterr().out
    for pipeline, target in PIPELINES.items():
        assert f"{pipeline} ({target}): " in out

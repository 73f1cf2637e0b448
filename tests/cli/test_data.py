"""Output folders of `autovend synth`, `calibrate` and `validate`: each writes into a new or empty folder or
over its own earlier output; any other folder is refused and kept unless --force; a failure keeps the old output.

The source is a small synthetic operator (3 machines, 7 weeks, three subcategories kept) so each run is quick.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from autovend.cli import app
from autovend.errors import OutputExistsError
from autovend.io import OUTPUT_MARKER

SMALL = {
    "synthesize": {
        "seed": 3,
        "start": "2024-06-03",
        "end": "2024-07-21",  # 7 weeks: 6 to train on (4 are needed for the shocks), 1 to validate on
        "target_units": 1500,
        "n_with_inventory": 3,
        "locations": {"worksite/canteen": 2, "office/office_building": 1},
    },
    "calibrate": {"keep_subcategories": ["bottled_water", "tea_drinks", "chips_puffed"], "em_rounds": 1},
    "validate": {"test_weeks": 1, "seeds": 2, "min_machine_days": 14},
}
FIX = "choose another folder, or pass --force to replace it"


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[Path, Path]:
    """(source folder, params file) of the small operator, written by `autovend synth`."""
    base = tmp_path_factory.mktemp("small")
    params = base / "small.yaml"
    params.write_text(yaml.safe_dump(SMALL))
    res = _cli("synth", "-o", base / "src", "--truth", base / "truth", "--params", params)
    assert res.exit_code == 0, res.output
    return base / "src", params


def _cli(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args])


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _foreign(folder: Path) -> Path:
    """A folder holding a file of the user's."""
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("mine")
    return folder


def _refused(res, folder: Path) -> str:
    assert isinstance(res.exception, OutputExistsError), res.output
    message = str(res.exception)
    assert str(folder) in message and FIX in message
    assert _tree(folder) == {"notes.txt": b"mine"}
    return message


def _marker(folder: Path) -> dict:
    return json.loads((folder / OUTPUT_MARKER).read_text())


# ---------------------------------------------------------------------------------------------- synth


def test_synth_refuses_a_foreign_folder_before_writing_anything(tmp_path, small):
    params = small[1]
    out = _foreign(tmp_path / "src")
    res = _cli("synth", "-o", out, "--truth", tmp_path / "truth", "--params", params)
    assert "is not an earlier source output" in _refused(res, out)
    assert not (tmp_path / "truth").exists()
    truth = _foreign(tmp_path / "truth2")
    _refused(_cli("synth", "-o", tmp_path / "src2", "--truth", truth, "--params", params), truth)
    assert not (tmp_path / "src2").exists()


def test_synth_replaces_its_own_output_and_with_force_a_foreign_folder(tmp_path, small):
    src, params = small
    out, truth = tmp_path / "src", tmp_path / "truth"
    assert _cli("synth", "-o", out, "--truth", truth, "--params", params).exit_code == 0
    (out / "orders.csv").write_text("edited")  # a file synth wrote: replaced by the next run
    assert _cli("synth", "-o", out, "--truth", truth, "--params", params).exit_code == 0
    assert _tree(out) == _tree(src)  # the same bytes as the module's source, marker included
    assert _marker(out)["kind"] == "source" and _marker(truth)["kind"] == "truth"
    forced = _foreign(tmp_path / "forced")
    res = _cli("synth", "-o", forced, "--truth", tmp_path / "truth3", "--params", params, "--force")
    assert res.exit_code == 0, res.output
    assert _tree(forced) == _tree(src)  # notes.txt is gone: --force replaces the folder


def test_synth_into_its_own_truth_folder_is_refused(tmp_path, small):
    res = _cli("synth", "-o", tmp_path / "x", "--truth", tmp_path / "x", "--params", small[1], "--force")
    assert isinstance(res.exception, OutputExistsError) and "overlap" in str(res.exception)
    assert not (tmp_path / "x").exists()


def test_a_refusal_is_a_message_and_exit_2_not_a_traceback(tmp_path, small, monkeypatch, capsys):
    from autovend.cli import main

    out = _foreign(tmp_path / "src")
    monkeypatch.setattr(sys, "argv", ["autovend", "synth", "-o", str(out), "--truth", str(tmp_path / "t")])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 2
    err = " ".join(capsys.readouterr().err.split())  # rich wraps long lines
    assert err.startswith("error: output folder") and "or pass --force to replace it" in err
    assert "Traceback" not in err


# ---------------------------------------------------------------------------------------------- calibrate


def test_calibrate_refuses_foreign_out_and_report_folders_and_keeps_them(tmp_path, small):
    src, params = small
    out = _foreign(tmp_path / "cal")
    _refused(_cli("calibrate", src, "-o", out, "--params", params), out)
    report = _foreign(tmp_path / "report")
    res = _cli("calibrate", src, "-o", tmp_path / "cal2", "--report", report, "--params", params)
    _refused(res, report)
    assert not (tmp_path / "cal2").exists()  # both folders are checked before any work


def test_calibrate_never_replaces_its_source(tmp_path, small):
    src, params = small
    before = _tree(src)
    for out in (src, src.parent):
        res = _cli("calibrate", src, "-o", out, "--params", params, "--force")
        assert isinstance(res.exception, OutputExistsError) and "contains the input" in str(res.exception)
    res = _cli("calibrate", src, "-o", src / "cal", "--params", params, "--force")
    assert isinstance(res.exception, OutputExistsError) and "inside the input folder" in str(res.exception)
    assert _tree(src) == before


@pytest.mark.slow
def test_calibrate_force_then_its_own_output_is_replaced_and_a_failure_keeps_it(tmp_path, small, monkeypatch):
    src, params = small
    out, report = _foreign(tmp_path / "cal"), _foreign(tmp_path / "report")
    args = ("calibrate", src, "-o", out, "--report", report, "--params", params)
    res = _cli(*args, "--force")
    assert res.exit_code == 0, res.output
    first = _tree(report)
    assert "notes.txt" not in _tree(out) and "notes.txt" not in first and "calibration.md" in first
    assert _marker(out)["kind"] == "calibration" and _marker(report)["kind"] == "calibration-report"
    assert sorted(_marker(report)["files"]) == sorted(set(first) - {OUTPUT_MARKER})
    (report / "calibration.md").write_text("edited")
    res = _cli(*args)
    assert res.exit_code == 0, res.output
    assert _tree(report) == first  # the edited file is written again

    # the other kind's folder is not taken over: the report folder is no calibration folder
    res = _cli("calibrate", src, "-o", report, "--params", params)
    assert "holds a calibration-report output, not a calibration output" in str(res.exception)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("autovend.calibration.report.site_preference_figure", broken)
    res = _cli(*args)
    assert isinstance(res.exception, OSError)
    assert _tree(report) == first  # the earlier report, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal", "report"]  # no temporary folder left


# ---------------------------------------------------------------------------------------------- validate


def test_validate_refuses_foreign_folders_and_keeps_them(tmp_path, small):
    src, params = small
    out = _foreign(tmp_path / "val")
    _refused(_cli("validate", src, "-o", out, "--params", params), out)
    cal = _foreign(tmp_path / "cal")
    res = _cli("validate", src, "-o", tmp_path / "val2", "--calibration-out", cal, "--params", params)
    _refused(res, cal)
    assert not (tmp_path / "val2").exists()


@pytest.mark.slow
def test_validate_force_then_its_own_output_is_replaced_and_a_failure_keeps_it(tmp_path, small, monkeypatch):
    src, params = small
    out = _foreign(tmp_path / "val")
    args = ("validate", src, "-o", out, "--params", params)
    res = _cli(*args, "--force")
    assert res.exit_code == 0, res.output
    first = _tree(out)
    assert _marker(out)["kind"] == "validation-report"
    assert set(first) == {
        OUTPUT_MARKER,
        "metrics.json",
        "headline.json",
        "verdict.json",
        "provenance.json",
        "validation.md",
        "weekly.png",
        "subcategory.png",
        "comparisons.png",
        "plots/weekly.csv",
        "plots/subcategory.csv",
        "plots/scores.csv",
        "plots/comparisons.csv",
        "plots/level_backtest.csv",
    }
    # as `dvc repro` leaves it: the files DVC tracks removed, the marker and the empty plots/ kept
    for name in set(first) - {OUTPUT_MARKER}:
        (out / name).unlink()
    res = _cli(*args)
    assert res.exit_code == 0, res.output
    assert _tree(out) == first

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("autovend.validation.report.draw_all", broken)
    res = _cli(*args)
    assert isinstance(res.exception, OSError)
    assert _tree(out) == first
    assert [p.name for p in tmp_path.iterdir()] == ["val"]


# ---------------------------------------------------------------------------------------------- summary


def test_summary_of_given_folders_and_a_shipped_world(tmp_path, small, monkeypatch):
    src, params = small
    assert _cli("calibrate", src, "-o", tmp_path / "cal", "--params", params).exit_code == 0
    assert _cli("validate", src, "-o", tmp_path / "val", "--params", params).exit_code == 0
    monkeypatch.chdir(tmp_path)
    res = _cli("summary", "--calibration", "cal", "--validation", "val", "--world", "cn20")
    assert res.exit_code == 0, res.output
    assert "calibration of" in res.output and "held-out validation" in res.output
    assert "cn20 (hash c5b32fcff28f)" in res.output and "missing" not in res.output


def test_summary_without_the_pipeline_outputs_names_each_one_and_exits_1(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no checkout here
    res = CliRunner().invoke(app, ["summary"])
    assert res.exit_code == 1
    out = " ".join(res.output.split())
    assert "missing: data/calibration/synthetic-cn/calibration.json (written by `autovend calibrate SOURCE" in out
    assert "missing: reports/synthetic-cn/validation/metrics.json (written by `autovend validate SOURCE" in out
    assert "cn20 (hash c5b32fcff28f)" in out  # the shipped world is found by name
    assert "which `make repro` (or `dvc repro`) writes in a checkout of the repository" in out
    res = CliRunner().invoke(app, ["summary", "--world", "cn21"])
    assert res.exit_code == 1 and "missing: the world bundle cn21" in " ".join(res.output.split())


# ---------------------------------------------------------------------------------------------- progress


def _steps(fn, *args, **kwargs) -> list[tuple[str, float]]:
    from autovend.progress import listening

    seen: list[tuple[str, float]] = []
    with listening(lambda what, done: seen.append((what, done))):
        fn(*args, **kwargs)
    fractions = [done for _, done in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0  # it only moves on
    return seen


def test_synth_calibrate_and_validate_report_their_real_steps(tmp_path, small):
    from autovend.pipeline import calibrate, synthesize, validate

    src, params = small
    seen = _steps(synthesize.run, tmp_path / "src", tmp_path / "truth", params, None)
    names = [what for what, _ in seen]
    assert names.index("synth: generate, first scaling run") < names.index("synth: generate, final run")
    assert names[-2:] == ["synth: write", "synth"]
    seen = _steps(calibrate.run, src, tmp_path / "cal", params, None, tmp_path / "report")
    names = [what for what, _ in seen]
    assert names[:3] == [
        "calibrate: load and check the source",
        "calibrate: estimate",
        "calibrate: estimate, daily panel",
    ]
    assert "calibrate: estimate, second pass" in names and "calibrate: write the report" in names
    seen = _steps(validate.run, src, tmp_path / "val", params, None)
    names = [what for what, _ in seen]
    for name in (
        "validate: validation, training calibration, second pass",  # the training window's calibration
        "validate: validation, model replay",
        "validate: validation, control replays",
        "validate: validation, other estimators, first pass",  # the paper estimator's calibration
        "validate: write the report",
    ):
        assert name in names
    assert "validate: write the training calibration" not in names  # not asked for


def test_the_progress_bar_shows_an_eta_and_nothing_of_it_enters_the_outputs(tmp_path, small):
    from autovend.pipeline.calibrate import run

    src, params = small
    res = _cli("calibrate", src, "-o", tmp_path / "cli", "--report", tmp_path / "cli-report", "--params", params)
    assert res.exit_code == 0, res.output
    assert "calibrate" in res.output and "100%" in res.output and "ETA" in res.output
    run(src, tmp_path / "quiet", params, None, tmp_path / "quiet-report")  # no listener: no progress at all
    assert _tree(tmp_path / "cli") == _tree(tmp_path / "quiet")
    assert _tree(tmp_path / "cli-report") == _tree(tmp_path / "quiet-report")

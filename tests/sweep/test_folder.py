"""A sweep's --out follows the output-folder rule: a user's own results.csv and leaderboard.md are never overwritten
without --force; an earlier sweep's folder (its marker) is continued; an input is never written into."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from autovend.cli import main
from autovend.errors import OutputExistsError
from autovend.io import OUTPUT_MARKER
from autovend.sweep import parse_spec, run_sweep
from autovend.sweep.folder import SWEEP_FILES, check_sweep_folder, mark_sweep_folder
from tests.sweep.conftest import toy_bundle  # noqa: F401


def _spec(world: Path):  # noqa: ANN202
    return parse_spec({"worlds": [str(world)], "agents": ["baseline"], "seeds": [1], "days": 2})


def _user_files(out: Path) -> dict[str, str]:
    out.mkdir(parents=True)
    files = {"results.csv": "my,own\n1,2\n", "leaderboard.md": "# my board\n"}
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    return files


def test_a_sweep_never_overwrites_a_users_results_without_force(toy_bundle: Path, tmp_path: Path) -> None:  # noqa: F811
    out = tmp_path / "mine"
    files = _user_files(out)
    with pytest.raises(OutputExistsError, match=r"not an earlier sweep's folder .*results\.csv.*--force"):
        run_sweep(_spec(toy_bundle), out)
    assert {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()} == files


def test_the_command_exits_2_and_leaves_the_folder_as_it_was(
    toy_bundle: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    spec = tmp_path / "sweep.yaml"
    spec.write_text(f"worlds: [{toy_bundle}]\nagents: [baseline]\nseeds: [1]\ndays: 2\n", encoding="utf-8")
    out = tmp_path / "mine"
    files = _user_files(out)
    monkeypatch.setattr(sys, "argv", ["autovend", "sweep", str(spec), "--out", str(out)])
    with pytest.raises(SystemExit) as exc:
        main()
    assert exc.value.code == 2
    assert "--force" in " ".join(capsys.readouterr().err.split())
    assert {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()} == files


def test_the_folder_rule(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    check_sweep_folder(out)  # absent
    out.mkdir()
    check_sweep_folder(out)  # empty
    (out / "runs" / "w" / "baseline-s1-d2").mkdir(parents=True)
    (out / "runs" / "w" / "baseline-s1-d2" / "run.json").write_text("{}", encoding="utf-8")
    check_sweep_folder(out)  # run folders only
    mark_sweep_folder(out)
    marker = json.loads((out / OUTPUT_MARKER).read_text(encoding="utf-8"))
    assert (marker["kind"], marker["files"]) == ("sweep", sorted(SWEEP_FILES))
    for name in SWEEP_FILES:
        (out / name).write_text("earlier\n", encoding="utf-8")
    check_sweep_folder(out)  # an earlier sweep's folder is continued
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    with pytest.raises(OutputExistsError, match=r"holds files a sweep did not write there: notes\.txt"):
        check_sweep_folder(out)
    check_sweep_folder(out, force=True)
    (out / OUTPUT_MARKER).write_text('{"kind": "source", "files": []}', encoding="utf-8")
    with pytest.raises(OutputExistsError, match="holds a source output, not a sweep"):
        check_sweep_folder(out)


def test_a_sweep_never_writes_into_an_input(toy_bundle: Path) -> None:  # noqa: F811
    with pytest.raises(OutputExistsError, match="lies inside the input folder"):
        check_sweep_folder(toy_bundle / "sweep", force=True, inputs=(toy_bundle,))
    with pytest.raises(OutputExistsError, match="is or contains the input"):
        check_sweep_folder(toy_bundle.parent, force=True, inputs=(toy_bundle,))


def test_a_file_as_out_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x", encoding="utf-8")
    for force in (False, True):
        with pytest.raises(OutputExistsError, match="is a file"):
            check_sweep_folder(tmp_path / "f", force=force)

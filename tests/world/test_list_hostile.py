"""`autovend world list` with broken bundles beside good ones: every world is listed, the broken ones say why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autovend.cli import app
from autovend.world.bundle import make_manifest, world_files, write_bundle
from autovend.world.catalogue import find_worlds, world_names
from autovend.world.model import Economics
from autovend.world.toy import toy_world

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("worlds")
    world = toy_world(2, 8, seed=0, economics=Economics(horizon_days=10))
    files = world_files(world)
    files["README.md"] = b"# toy\n"
    for name in ("good", "badjson", "alist", "shape", "binary"):
        write_bundle(root / name, files, make_manifest(world, files, name, "toy", {}))
    (root / "badjson" / "manifest.json").write_text('{"name": "x",', encoding="utf-8")
    (root / "alist" / "manifest.json").write_text("[1, 2]", encoding="utf-8")
    manifest = json.loads((root / "shape" / "manifest.json").read_text(encoding="utf-8"))
    manifest.update(name=5, params=[1], world_hash=None)
    (root / "shape" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    settings = json.loads((root / "shape" / "settings.json").read_text(encoding="utf-8"))
    settings.update(economics="x", horizon_days="abc")
    (root / "shape" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    (root / "binary" / "manifest.json").write_bytes(b"\xff\xfe\x00")
    (root / "not-a-world").mkdir()
    return root


def test_every_world_is_listed_and_the_broken_ones_say_why(worlds: Path) -> None:
    found = {w.path.name: w for w in find_worlds([worlds])}
    assert sorted(found) == ["alist", "badjson", "binary", "good", "shape"]
    assert found["good"].state == "verified"
    assert found["badjson"].state.startswith("broken: manifest.json is not valid JSON (line 1, column 14")
    assert found["alist"].state == "broken: manifest.json holds a JSON list, not an object; re-export or re-ship it"
    assert found["binary"].state.startswith("broken: manifest.json is not UTF-8 text")
    assert (found["shape"].name, found["shape"].days, found["shape"].currency) == ("shape", 0, "")
    assert found["shape"].state != "verified"
    assert world_names([worlds]) == ["alist", "badjson", "binary", "good", "shape"]


def test_the_command_lists_them_all(worlds: Path) -> None:
    result = CliRunner().invoke(app, ["world", "list", str(worlds)], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    assert "5 worlds" in result.output and "verified" in result.output
    assert "broken: manifest.json is not valid JSON" in result.output


def test_the_list_is_readable_at_80_columns(worlds: Path) -> None:
    result = CliRunner().invoke(app, ["world", "list", str(worlds)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines if not line.startswith("in ")) <= 80  # a folder's path is never cut
    assert "…" not in result.output  # nor is a cell
    (good,) = [line.split() for line in lines if line.endswith("verified")]  # one row per world, not cut
    assert good[1:7] == ["2", "×", "8", "10", "CNY", "none"] and len(good[-2]) == 12
    assert next(line for line in lines if line.split()[:1] == ["alist"]).split()[-1] == "broken"
    assert f"in {worlds}: alist, badjson, binary, " in result.output
    why = " ".join(result.output.split())
    assert "alist: broken: manifest.json holds a JSON list, not an object; re-export or re-ship it" in why


def test_the_shipped_worlds_at_80_columns_show_their_verdicts_in_full(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["world", "list"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines() if not line.startswith("in ")) <= 80
    assert "…" not in result.output
    rows = {line.split()[0]: line.split() for line in result.output.splitlines() if line.split()[:1] in (["cn20"],)}
    assert rows["cn20"][1:] == ["20", "×", "1,372", "180", "CNY", "validated", "c5b32fcff28f", "verified"]
    nj5 = json.loads((ROOT / "worlds" / "nj5" / "manifest.json").read_text())["validation"]["verdict"]
    assert len(nj5.split("_")) > 2  # long enough to wrap at 80 columns
    assert all(word in result.output for word in nj5.split("_"))  # nj5's verdict in full, over two lines

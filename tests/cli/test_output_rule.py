"""One rule for every writing command: a folder holding files the command did not write is refused (exit 2)
without --force, and left as it was; an input is never written into."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autovend.cli import main
from tests.sweep.conftest import toy_bundle  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
NJ_MAP = ROOT / "autovend" / "data" / "adapters" / "nj_vending.yaml"
EXAMPLE_CSV = ROOT / "examples" / "mappings" / "kiosk-eur.csv"
EXAMPLE_MAP = ROOT / "examples" / "mappings" / "kiosk-eur.yaml"


def _exit(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["autovend", *args])
    with pytest.raises(SystemExit) as exc:
        main()
    return int(exc.value.code or 0), " ".join(capsys.readouterr().err.split())


def _mine(folder: Path, name: str = "report.html") -> dict[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("mine\n", encoding="utf-8")
    (folder / "results.csv").write_text("mine\n", encoding="utf-8")
    return {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir()}


@pytest.mark.parametrize(
    "command",
    [
        ["calibrate", "{src}", "-o", "{out}"],
        ["export-world", "{src}", "{src}", "-o", "{out}"],
        ["world", "ship", "{world}", "-o", "{out}"],
        ["synth", "-o", "{out}", "--truth", "{tmp}/truth"],
        ["adapt", "table", str(EXAMPLE_CSV), "--map", str(EXAMPLE_MAP), "-o", "{out}"],
        ["run", "--world", "{world}", "--days", "1", "--out", "{out}"],
        ["run", "--world", "{world}", "--days", "1", "--out", "{out}", "--resume"],
    ],
    ids=["calibrate", "export-world", "world-ship", "synth", "adapt", "run", "run-resume"],
)
def test_a_folder_of_the_users_files_is_refused(
    command: list[str],
    toy_bundle: Path,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    before = _mine(out, "report.md" if command[0] == "run" else "report.html")
    (tmp_path / "src").mkdir()
    names = {"src": str(tmp_path / "src"), "out": str(out), "world": str(toy_bundle), "tmp": str(tmp_path)}
    code, err = _exit(monkeypatch, capsys, *(a.format(**names) for a in command))
    assert code == 2, err
    assert "--force" in err and "Traceback" not in err
    assert {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()} == before


@pytest.fixture(scope="module")
def two_runs(toy_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:  # noqa: F811
    from autovend.agents.base import make_agent
    from autovend.runner import run_episode
    from autovend.world.bundle import load_world

    base = tmp_path_factory.mktemp("runs")
    world = load_world(toy_bundle)
    for seed in (1, 2):
        run_episode(world, make_agent("baseline", seed), seed, days=2, out_dir=base / f"s{seed}", world_path=toy_bundle)
    return [base / "s1", base / "s2"]


def test_compare_never_writes_into_a_run_folder_or_a_users_folder(
    two_runs: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    report = two_runs[0] / "report.html"
    page = report.read_bytes()
    code, err = _exit(monkeypatch, capsys, "compare", *map(str, two_runs), "--out", str(two_runs[0]))
    assert code == 2 and "is or contains the input" in err
    assert report.read_bytes() == page
    out = tmp_path / "mine"
    before = _mine(out)
    code, err = _exit(monkeypatch, capsys, "compare", *map(str, two_runs), "--out", str(out), "--force")
    assert code == 2 and "compare never replaces a folder it did not write" in err
    assert {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()} == before
    fresh = tmp_path / "cmp"
    for _ in range(2):  # an earlier comparison is replaced
        assert _exit(monkeypatch, capsys, "compare", *map(str, two_runs), "--out", str(fresh))[0] == 0
    assert (fresh / "comparison.md").is_file()


def test_check_never_writes_its_summary_into_the_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "orders.csv").write_text("raw\n", encoding="utf-8")
    code, err = _exit(monkeypatch, capsys, "check", str(src), "--json", str(src / "orders.csv"))
    assert code == 2 and "lies inside the source folder" in err
    assert (src / "orders.csv").read_text(encoding="utf-8") == "raw\n"

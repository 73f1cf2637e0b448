"""The wheel: the shipped worlds are package data, the base install needs no pipeline package, and an
installed AutoVend runs a shipped world by name in any folder.

The wheel is built offline (--no-build-isolation) from a copy of the sources, so the checkout gets no
build/ folder; it is installed with --target beside this environment's dependencies.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md")
PIPELINE_ONLY = ("dvc", "statsmodels", "pandera", "openai", "gymnasium")

pytestmark = pytest.mark.slow


def _bundles() -> list[Path]:
    return sorted(p.parent for p in (ROOT / "worlds").glob("*/manifest.json"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        shutil.copy2(ROOT / name, src / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "autovend", src / "autovend", ignore=skip)
    shutil.copytree(ROOT / "worlds", src / "worlds", ignore=skip)
    dist = tmp_path_factory.mktemp("dist")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(src)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=600)
    (found,) = dist.glob("autovend-*.whl")
    return found


def test_the_wheel_holds_every_shipped_world_byte_for_byte(wheel):
    assert _bundles(), "no world bundle under worlds/"
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())
        for bundle in _bundles():
            files = sorted(p for p in bundle.rglob("*") if p.is_file())
            assert any(f.name == "manifest.json" for f in files)
            for f in files:
                inside = f"autovend/_worlds/{bundle.name}/{f.relative_to(bundle).as_posix()}"
                assert inside in names, inside
                assert whl.read(inside) == f.read_bytes(), inside
        packaged = {n.split("/")[2] for n in names if n.startswith("autovend/_worlds/")}
        assert packaged == {b.name for b in _bundles()}
        assert "autovend/tools/tools_doc.md" in names  # the docs template travels too


def test_the_base_install_requires_no_pipeline_package(wheel):
    with zipfile.ZipFile(wheel) as whl:
        meta_name = next(n for n in whl.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(whl.read(meta_name).decode("utf-8"))
    requires = meta.get_all("Requires-Dist") or []
    base = {r.split(";")[0].split(">")[0].split("=")[0].strip() for r in requires if "extra ==" not in r}
    assert {"numpy", "pandas", "pyarrow", "pydantic", "mcp", "typer"} <= base
    assert not base & set(PIPELINE_ONLY)
    assert {"pipeline", "llm", "gym", "dev"} <= set(meta.get_all("Provides-Extra") or [])
    pipeline = {r.split(">")[0] for r in requires if "extra == 'pipeline'" in r or 'extra == "pipeline"' in r}
    assert {"dvc", "statsmodels", "pandera"} <= pipeline


def test_an_installed_autovend_runs_a_shipped_world_by_name_in_any_folder(wheel, tmp_path):
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(target)]
    subprocess.run([*pip, str(wheel)], check=True, capture_output=True, timeout=600)
    work = tmp_path / "elsewhere"  # no worlds/ here
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(target)}
    where = subprocess.run(
        [sys.executable, "-c", "import autovend; print(autovend.__file__)"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(target)  # the installed copy, not the checkout
    out = tmp_path / "run"
    args = ["-m", "autovend.cli", "run", "--world", "cn20", "--days", "2", "--out", str(out), "--no-report"]
    proc = subprocess.run([sys.executable, *args], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    meta = (out / "run.json").read_text(encoding="utf-8")
    assert '"days": 2' in meta and str(target / "autovend" / "_worlds" / "cn20") in meta
    wide = {**env, "COLUMNS": "400"}  # the table's cells in full
    listed = subprocess.run(
        [sys.executable, "-m", "autovend.cli", "world", "list"], cwd=work, env=wide, capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if " cn20 " in line)
    assert "verified" in row and str(target / "autovend" / "_worlds" / "cn20") in row

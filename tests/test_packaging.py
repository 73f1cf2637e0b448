"""The wheel needs no checkout: it carries the shipped worlds and every default file as package data, its base
install needs no pipeline package, and, installed into a fresh virtual environment, the README's and the docs'
examples that need no checkout run from an empty folder.

The wheel is built with `pip wheel --no-deps --no-build-isolation` from a copy of the sources (so the checkout gets no
build/ folder): offline, with the setuptools the lock pins, and with no new dependency (`python -m build` would be
one, and by default builds in an isolated environment that downloads setuptools). The fresh environment gets its
dependencies from the package index (or pip's cache) at the versions of requirements/lock.txt; first the base install
alone (so `replay`, `sweep --dry-run` and the rest are shown to need no extra), then the `[gym]` extra for the gym
example. On the 2-core development machine the test takes about two minutes of wall time (52 s of CPU): about one
minute installing, half a minute for the README's 180-day baseline run, the rest for the other examples.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE")
PIPELINE_ONLY = ("dvc", "statsmodels", "pandera", "openai", "gymnasium")
EXTRAS_ONLY = ("dvc", "statsmodels", "pandera", "openai", "gymnasium", "dask", "distributed")
PACKAGE_DATA = (  # the default files the package reads
    "autovend/agents/llm/prices.yaml",  # the price table of openai: runs
    "autovend/agents/configs/baseline-paper.yaml",  # --agent-config baseline-paper
    "autovend/agents/configs/baseline-pinned-prices.yaml",
    "autovend/export/networks/paper-cn20.csv",  # --network paper-cn20
    "autovend/sweep/specs/baselines-cn20.yaml",  # autovend sweep baselines-cn20
    "autovend/data/adapters/nj_vending.yaml",  # autovend adapt nj-vending
    "autovend/tools/tools_doc.md",  # the tools' docs template
)

pytestmark = pytest.mark.slow


def _bundles() -> list[Path]:
    return sorted(p.parent for p in (ROOT / "worlds").glob("*/manifest.json"))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path, str]:
    """(the wheel, the copy of the sources it was built from, what the build printed on stderr)."""
    src = tmp_path_factory.mktemp("src")
    for name in SOURCES:
        shutil.copy2(ROOT / name, src / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(ROOT / "autovend", src / "autovend", ignore=skip)
    shutil.copytree(ROOT / "worlds", src / "worlds", ignore=skip)
    dist = tmp_path_factory.mktemp("dist")
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(dist), str(src)]
    proc = subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=600)
    (found,) = dist.glob("autovend-*.whl")
    return found, src, proc.stderr


@pytest.fixture(scope="module")
def wheel(built) -> Path:
    return built[0]


def test_building_warns_of_nothing_and_leaves_no_build_folder(built):
    whl, src, stderr = built
    assert "Warning" not in stderr and "deprecated" not in stderr, stderr  # e.g. a license given as a TOML table
    assert not (src / "build").exists()  # setuptools' build folder is a temporary one (setup.py)
    with zipfile.ZipFile(whl) as z:
        assert "autovend-0.1.0.dist-info/licenses/LICENSE" in z.namelist()


def test_the_wheel_holds_every_shipped_world_and_default_file(wheel):
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
        for name in PACKAGE_DATA:
            assert name in names, name
            assert whl.read(name) == (ROOT / name).read_bytes(), name


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


# ------------------------------------------------------------------------------------- a fresh virtual environment


def _pins(tmp: Path) -> Path:
    """requirements/lock.txt as a constraints file: the locked versions without the hashes."""
    lock = (ROOT / "requirements" / "lock.txt").read_text(encoding="utf-8")
    pins = re.findall(r"^([A-Za-z0-9._\[\],-]+==[^\s\\]+)", lock, flags=re.M)
    assert len(pins) > 100  # the whole lock
    path = tmp / "constraints.txt"
    path.write_text("\n".join(re.sub(r"\[.*\]", "", p) for p in pins) + "\n", encoding="utf-8")
    return path


def _python_blocks(doc: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "docs" / doc).read_text(encoding="utf-8"), flags=re.S)


MCP_CLIENT = """
import anyio, json, sys
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=["serve", "--world", "cn20", "--seed", "1"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        weather = await s.call_tool("get_weather", {})
        refused = await s.call_tool("get_device_detail", {"device_id": "NOPE"})
        print(json.dumps([weather.structured_content["day"], refused.is_error, refused.structured_content]))

anyio.run(main)
"""
PACKAGE_FILES = """
from autovend.agents.llm.pricing import load_price_table
from autovend.agents.baseline.config import load_baseline_config
from autovend.shipped import NETWORKS, resolve_shipped
print(load_price_table().price("gpt-4.1-mini").entry, load_baseline_config("baseline-paper").cycle_rule,
      resolve_shipped("paper-cn20", NETWORKS).name)
"""


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel's base install (dependencies at the lock's versions)."""
    base = tmp_path_factory.mktemp("venv")
    env_dir = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(env_dir)], check=True, capture_output=True, timeout=600)
    pip = [str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "-c", str(_pins(base))]
    proc = subprocess.run([*pip, str(wheel)], capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return env_dir


def _runner(venv: Path, work: Path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", COLUMNS="200")

    def run(*args: str, code: int = 0) -> str:
        proc = subprocess.run(list(args), cwd=work, env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == code, f"{args}: exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
        return " ".join((proc.stdout + proc.stderr).split())

    return run


def test_the_readme_and_docs_examples_run_from_an_empty_folder_in_a_fresh_venv(venv, tmp_path):
    work = tmp_path / "empty"
    work.mkdir()
    run = _runner(venv, work)
    python = str(venv / "bin" / "python")
    where = run(python, "-c", "import autovend; print(autovend.__file__)")
    assert str(venv) in where and str(ROOT) not in where  # the installed copy, not the checkout
    missing = run(python, "-c", f"import importlib.util as u; print([m for m in {EXTRAS_ONLY!r} if u.find_spec(m)])")
    assert missing == "[]"  # the base install: no extra

    # README, "Worlds" and "Running agents" (the baseline's seed 1 to the cent of the README's table)
    listed = run("autovend", "world", "list")
    assert all(f"{name} " in listed for name in ("cn20", "cn99", "nj5")) and "broken" not in listed
    assert "cn20: verified" in run("autovend", "world", "info", "cn20")
    out = run("autovend", "run", "--world", "cn20", "--agent", "baseline", "--seed", "1")
    assert "final net assets 274,304.79" in out and (work / "runs" / "cn20" / "baseline-s1" / "report.html").exists()
    assert "Day 12" in run("autovend", "replay", "runs/cn20/baseline-s1", "--day", "12")  # no [llm] extra needed
    assert "day 14" in run("autovend", "replay", "runs/cn20/baseline-s1", "--summary", "--from", "1", "--to", "14")

    # docs/agents.md: the complete example, saved as hold.py, run twice and compared
    (work / "hold.py").write_text(_python_blocks("agents.md")[0], encoding="utf-8")
    out = run("autovend", "run", "--agent", "hold.py:HoldAgent", "--days", "5")
    assert "hold seed 1: 5 days, final net assets 39,600.00" in out
    run("autovend", "run", "--agent", "hold.py:HoldAgent", "--days", "5", "--seed", "2")
    assert "hold" in run("autovend", "compare", "runs/cn20/hold-s1", "runs/cn20/hold-s2")

    # docs/agents.md, VendingEnv: your own loop
    (work / "loop.py").write_text(_python_blocks("agents.md")[3] + "print(env.day, env.done)\n", encoding="utf-8")
    assert run(python, "loop.py").endswith("31 True")  # 30 days settled: the env stands at day 31, done

    # README and docs/sweeps.md: the shipped sweep spec, a dry run (no Dask in the base install)
    out = run("autovend", "sweep", "baselines-cn20", "--out", "runs/baselines", "--dry-run")
    assert "15 runs (1 world x 5 agents x 3 seeds): 0 finished, 0 to resume, 15 to start" in out
    assert "runs/cn20/baseline-paper-s2-d180" in out and "runs/cn20/hold-s1-d180" in out  # hold: shipped too
    assert not (work / "runs" / "baselines").exists()

    # docs/mcp-clients.md: a client on stdio, and a refusal with its code
    (work / "client.py").write_text(MCP_CLIENT, encoding="utf-8")
    day, refused, content = json.loads(run(python, "client.py", str(venv / "bin" / "autovend")))
    assert day == 1 and refused and content["code"] == "not_found"

    # the default files of openai: runs, --agent-config and --network come with the package
    assert run(python, "-c", PACKAGE_FILES) == "gpt-4.1-mini fixed paper-cn20.csv"

    # autovend summary outside a checkout: says what is missing, exit 1
    out = run("autovend", "summary", code=1)
    assert "missing: data/calibration/synthetic-cn/calibration.json" in out and "cn20 (hash c5b32fcff28f)" in out

    # docs/agents.md, Gymnasium: `pip install autovend[gym]`, then the example as written
    pip = [python, "-m", "pip", "install", "-q", "-c", str(tmp_path / "pins.txt")]
    shutil.copy(_pins(tmp_path), tmp_path / "pins.txt")
    run(*pip, "gymnasium")
    (work / "gym_example.py").write_text(_python_blocks("agents.md")[4] + "print(obs['day'], reward)\n")
    assert run(python, "gym_example.py").startswith("2 ")  # the day after the one ended

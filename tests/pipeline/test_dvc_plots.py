"""`dvc plots show` and `dvc plots diff` of the shipped pipelines render offline, in headless Chromium.

The plots DVC knows are the validations' static figures (PNG), so DVC's page embeds images and loads no Vega
from a CDN (with CSV plots and Vega templates the page was blank offline). The pipelines' dvc.yaml files and
the committed figures are copied into a fresh git + DVC repository in a temporary folder, committed, and the
pages DVC writes for the workspace and for the workspace against HEAD are opened with the network off.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ..browser import offline_page

ROOT = Path(__file__).resolve().parents[2]
DVC = str(Path(sys.executable).with_name("dvc"))
PIPELINES = [ROOT / "dvc.yaml", *sorted((ROOT / "pipelines").glob("*/dvc.yaml"))]
IMAGES = """() => [...document.images].map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0])"""


def _plots(path: Path) -> list[str]:
    """The plots a dvc.yaml declares, as paths from the repository root."""
    stages = yaml.safe_load(path.read_text(encoding="utf-8"))["stages"]
    out = []
    for stage in stages.values():
        base = (path.parent / stage.get("wdir", ".")).resolve().relative_to(ROOT)
        for entry in stage.get("plots", []):
            out.append(str(base / (next(iter(entry)) if isinstance(entry, dict) else entry)))
    return out


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    if shutil.which("git") is None or not Path(DVC).exists():
        pytest.skip("needs git and dvc (the [pipeline] extra)")
    repo = tmp_path_factory.mktemp("plots-repo")
    run = lambda *a: subprocess.run(a, cwd=repo, check=True, capture_output=True, text=True)  # noqa: E731
    run("git", "init", "-q")
    run(DVC, "init", "-q")
    for path in PIPELINES:
        target = repo / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
        for plot in _plots(path):
            (repo / plot).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / plot, repo / plot)
    run("git", "add", "-A")
    run("git", "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "plots")
    return repo


def test_the_pipelines_declare_only_static_figures_as_plots():
    plots = [p for path in PIPELINES for p in _plots(path)]
    assert plots and all(p.endswith((".png", ".svg")) for p in plots), plots


@pytest.mark.parametrize("command", [["show"], ["diff", "HEAD"]], ids=["show", "diff"])
def test_dvc_plots_render_offline(repo, tmp_path, command):
    out = tmp_path / "plots"
    subprocess.run([DVC, "plots", *command, "-o", str(out)], cwd=repo, check=True, capture_output=True)
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html  # nothing to fetch
    with offline_page(out / "index.html", tmp_path / "profile") as visit:
        visit.page.wait_for_load_state("load")
        images = visit.page.evaluate(IMAGES)
        assert visit.blocked == [] and visit.errors == [] and visit.console_errors == []
    n_plots = sum(len(_plots(p)) for p in PIPELINES)
    assert len(images) == n_plots * (2 if command[0] == "diff" else 1)  # diff: workspace and HEAD side by side
    assert all(ok for _, ok in images), images

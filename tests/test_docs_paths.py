"""The README, the docs and the package's texts name no path a user of the repository does not have: the development
workspace's `shared/` folder beside the checkout (where the public NJ export comes from is in docs/real-data.md)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = re.compile(r"(\.\./)?shared/(data|spec|seeds)\b")
# data, not a message: the adapted NJ source's description (source.yaml; its bytes are pinned by the adapter's tests)
KEPT = {"autovend/data/adapters/nj_vending.yaml": 1}


def _texts() -> list[Path]:
    files = [ROOT / "README.md", ROOT / "Makefile", ROOT / "pyproject.toml", *sorted((ROOT / "docs").glob("*.md"))]
    files += [p for p in sorted((ROOT / "autovend").rglob("*")) if p.suffix in (".py", ".yaml", ".md", ".csv")]
    files += sorted((ROOT / "pipelines").rglob("dvc.yaml"))
    return files


def test_no_text_points_into_the_development_workspace():
    found = {}
    for path in _texts():
        hits = WORKSPACE.findall(path.read_text(encoding="utf-8"))
        name = path.relative_to(ROOT).as_posix()
        if len(hits) != KEPT.get(name, 0):
            found[name] = len(hits)
    assert found == {}, f"paths into the workspace's shared/ folder: {found}"

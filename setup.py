"""Build hook: every world bundle under worlds/ (a folder with a manifest.json) ships as package data.

The bundles stay at the repository root, where the pipeline writes them (dvc.yaml's ship stages)
and tests compare them. Building a wheel (or installing from a checkout or an sdist without -e)
copies each one into autovend/_worlds/NAME inside the build, where `autovend.world.catalogue`
finds it; nothing is written into the source tree: the build folder (setuptools' build/) is a temporary
folder outside it, removed when the build ends. An editable install reads the checkout's worlds/
directly. Everything else about the package is in pyproject.toml.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
WORLDS = ROOT / "worlds"
PACKAGED = Path("autovend") / "_worlds"  # inside the build (and so the installed package)
MANIFEST = "manifest.json"


def shipped_bundles(worlds: Path = WORLDS) -> list[Path]:
    """The bundle folders directly under `worlds` (each holds a manifest.json), by name."""
    return sorted(p.parent for p in worlds.glob(f"*/{MANIFEST}")) if worlds.is_dir() else []


class BuildWithWorlds(build_py):
    """`build_py` that also copies the shipped world bundles into the build's autovend/_worlds."""

    def run(self) -> None:
        """Build the package, then copy the bundles (not for an editable install)."""
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / PACKAGED
        if target.exists():  # a previous build's copy: only build output lives here
            shutil.rmtree(target)
        for bundle in shipped_bundles():
            shutil.copytree(bundle, target / bundle.name, ignore=shutil.ignore_patterns(".*", "__pycache__"))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        """The package's files and the copied bundles' files."""
        target = Path(self.build_lib) / PACKAGED
        copied = [str(p) for p in sorted(target.rglob("*")) if p.is_file()] if target.is_dir() else []
        return list(super().get_outputs(include_bytecode)) + copied


BUILD_BASE = tempfile.mkdtemp(prefix="autovend-build-")  # not ./build: a build leaves the checkout as it was
atexit.register(shutil.rmtree, BUILD_BASE, ignore_errors=True)

setup(cmdclass={"build_py": BuildWithWorlds}, options={"build": {"build_base": BUILD_BASE}})

"""World names: which bundle folder a world's name stands for, wherever a world is accepted.

The shipped worlds are the bundles under the repository's worlds/; an installed AutoVend carries
copies of them as package data (autovend/_worlds, see setup.py), a checkout or editable install
reads worlds/ itself. `resolve_world` turns what a user gave (`--world`, `VendingEnv(...)`,
`gymnasium.make(..., world=...)`, a sweep spec's `worlds:`) into a bundle folder: a folder as given,
or a bare name looked up as ./worlds/NAME, then among the user's installed worlds, then among the
shipped worlds. `worlds/NAME` that is no folder here is read as the name NAME (the docs' form works
outside a checkout).

The user's worlds (`autovend world install DIR`) live in the folders of the search path
`AUTOVEND_WORLDS_PATH` (folders separated by the system's path separator, ":" on Linux; installs go
to the first), or, when it is not set, in the user's data folder: `$XDG_DATA_HOME/autovend/worlds`
(`~/.local/share/autovend/worlds` by default) on Linux, `~/Library/Application Support/autovend/worlds`
on macOS, `%LOCALAPPDATA%/autovend/worlds` on Windows (the folders `platformdirs.user_data_dir`
names, without the dependency). This module reads nothing but folder listings and the environment,
so the bundle loader (`autovend.world.bundle`) can use it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from autovend.errors import BundleError

PACKAGED = Path(__file__).resolve().parents[1] / "_worlds"  # the worlds of an installed AutoVend
CHECKOUT = Path(__file__).resolve().parents[2] / "worlds"  # a checkout's worlds/ (editable install)
SHIPPED = PACKAGED if PACKAGED.is_dir() else CHECKOUT
LOCAL = Path("worlds")  # the worlds of the folder a command runs in
MANIFEST = "manifest.json"  # a bundle's manifest (`autovend.world.bundle.MANIFEST`)
WORLDS_PATH_ENV = "AUTOVEND_WORLDS_PATH"  # the user's world folders (a search path), overriding the data folder
APP = "autovend"


def user_data_dir() -> Path:
    """The user's data folder for AutoVend (as `platformdirs.user_data_dir("autovend")`; see the docstring)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / APP
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP
    base = os.environ.get("XDG_DATA_HOME", "").strip()
    return (Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "share") / APP


def user_world_roots() -> list[Path]:
    """The folders of the user's installed worlds: `AUTOVEND_WORLDS_PATH`'s, else the data folder's worlds/."""
    given = os.environ.get(WORLDS_PATH_ENV, "")
    folders = [Path(p).expanduser() for p in given.split(os.pathsep) if p.strip()]
    return folders or [user_data_dir() / "worlds"]


def install_root() -> Path:
    """Where `autovend world install` puts a world: the first of `user_world_roots`."""
    return user_world_roots()[0]


def bundle_folders(root: Path) -> list[Path]:
    """The folders directly in `root` that hold a manifest (none if `root` cannot be listed)."""
    try:
        return sorted(p for p in root.iterdir() if p.is_dir() and (p / MANIFEST).is_file())
    except OSError:
        return []


def world_roots() -> list[Path]:
    """Where names are looked up, in order: ./worlds, the user's installed worlds, then the shipped worlds."""
    return [LOCAL, *user_world_roots(), SHIPPED]


def world_names(roots: list[Path] | None = None) -> list[str]:
    """Names of the bundle folders in ./worlds and the shipped ones (without verifying them)."""
    names: set[str] = set()
    for root in roots if roots is not None else world_roots():
        names.update(p.name for p in bundle_folders(root))
    return sorted(names)


def resolve_world(world: str | os.PathLike[str]) -> Path:
    """The bundle folder that `world` names: a path to a folder, or the name of an installed or shipped world.

    A path that exists is used as given. A bare name (no folder part; `worlds/NAME` that is no folder
    here counts as NAME) is looked up as ./worlds/NAME, then among the user's installed worlds, then
    among the worlds shipped with AutoVend, so `--world cn20` works in any folder. Anything else raises
    `BundleError` listing the worlds that can be named.
    """
    path = Path(world)
    if path.exists():
        return path
    name = os.fspath(world)
    if len(path.parts) == 2 and path.parts[0] == LOCAL.name:  # the docs' worlds/cn20 outside a checkout
        name = path.parts[1]
        path = Path(name)
    if name and path.name == name and name not in (".", ".."):
        for root in world_roots():
            if (root / name / MANIFEST).is_file():
                return root / name
    known = ", ".join(world_names()) or "none found"
    raise BundleError(
        f"world {name!r} does not exist: it is neither a bundle folder nor the name of an installed or shipped "
        f"world (names: {known}); pass the folder of a world bundle, or one of those names (`autovend world list`), "
        "or install a bundle under a name with `autovend world install DIR`"
    )

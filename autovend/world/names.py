"""World names: which bundle folder a world's name stands for, wherever a world is accepted.

The shipped worlds are the bundles under the repository's worlds/; an installed AutoVend carries
copies of them as package data (autovend/_worlds, see setup.py), a checkout or editable install
reads worlds/ itself. `resolve_world` turns what a user gave (`--world`, `VendingEnv(...)`,
`gymnasium.make(..., world=...)`, a sweep spec's `worlds:`) into a bundle folder: a folder as given,
or a bare name looked up as ./worlds/NAME, then among the shipped worlds. This module reads nothing
but folder listings, so the bundle loader (`autovend.world.bundle`) can use it.
"""

from __future__ import annotations

import os
from pathlib import Path

from autovend.errors import BundleError

PACKAGED = Path(__file__).resolve().parents[1] / "_worlds"  # the worlds of an installed AutoVend
CHECKOUT = Path(__file__).resolve().parents[2] / "worlds"  # a checkout's worlds/ (editable install)
SHIPPED = PACKAGED if PACKAGED.is_dir() else CHECKOUT
LOCAL = Path("worlds")  # the worlds of the folder a command runs in
MANIFEST = "manifest.json"  # a bundle's manifest (`autovend.world.bundle.MANIFEST`)


def bundle_folders(root: Path) -> list[Path]:
    """The folders directly in `root` that hold a manifest (none if `root` cannot be listed)."""
    try:
        return sorted(p for p in root.iterdir() if p.is_dir() and (p / MANIFEST).is_file())
    except OSError:
        return []


def world_roots() -> list[Path]:
    """Where names are looked up, in order: ./worlds, then the shipped worlds."""
    return [LOCAL, SHIPPED]


def world_names(roots: list[Path] | None = None) -> list[str]:
    """Names of the bundle folders in ./worlds and the shipped ones (without verifying them)."""
    names: set[str] = set()
    for root in roots if roots is not None else world_roots():
        names.update(p.name for p in bundle_folders(root))
    return sorted(names)


def resolve_world(world: str | os.PathLike[str]) -> Path:
    """The bundle folder that `world` names: a path to a folder, or the name of a shipped world.

    A path that exists is used as given. A bare name (no folder part) is looked up as ./worlds/NAME,
    then among the worlds shipped with AutoVend, so `--world cn20` works in any folder. Anything
    else raises `BundleError` listing the worlds that can be named.
    """
    path = Path(world)
    if path.exists():
        return path
    name = os.fspath(world)
    if name and path.name == name and name not in (".", ".."):
        for root in world_roots():
            if (root / name / MANIFEST).is_file():
                return root / name
    known = ", ".join(world_names()) or "none found"
    raise BundleError(
        f"world {name!r} does not exist: it is neither a bundle folder nor the name of a shipped world "
        f"(names: {known}); "
        "pass the folder of a world bundle, e.g. worlds/cn20, or one of those names (`autovend world list`)"
    )

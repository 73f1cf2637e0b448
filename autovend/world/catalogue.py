"""Finding world bundles: the ones shipped with AutoVend and the ones in a folder of the user's.

The shipped worlds are the bundles under the repository's worlds/; an installed AutoVend carries
copies of them as package data (autovend/_worlds, see setup.py), a checkout or editable install
reads worlds/ itself. `resolve_world` turns what `--world` was given, a folder or a world's name,
into a bundle folder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from autovend.errors import BundleError
from autovend.world.bundle import MANIFEST, verify_bundle

PACKAGED = Path(__file__).resolve().parents[1] / "_worlds"  # the worlds of an installed AutoVend
CHECKOUT = Path(__file__).resolve().parents[2] / "worlds"  # a checkout's worlds/ (editable install)
SHIPPED = PACKAGED if PACKAGED.is_dir() else CHECKOUT
LOCAL = Path("worlds")  # the worlds of the folder a command runs in


@dataclass(frozen=True)
class WorldEntry:
    """One bundle found on disk, summarised from its manifest and settings."""

    name: str
    path: Path
    devices: int
    products: int
    days: int
    currency: str
    source: str
    world_hash: str
    state: str  # "verified", or why not
    verdict: str = "none"  # the shipped validation's verdict (`autovend.export.validation`), "none" if unshipped


_UNREADABLE = (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError)


def _json_object(path: Path) -> tuple[dict[str, Any], str | None]:
    """The JSON object in `path`, or ({}, why it cannot be read)."""
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return {}, f"{path.name} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
    except UnicodeDecodeError:
        return {}, f"{path.name} is not UTF-8 text"
    except OSError as exc:
        return {}, f"{path.name} cannot be read ({exc.strerror or type(exc).__name__})"
    if not isinstance(body, dict):
        return {}, f"{path.name} holds a JSON {type(body).__name__}, not an object"
    return body, None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _entry(folder: Path) -> WorldEntry:
    """A world's row; a bundle that cannot be read is listed all the same, its state saying why."""
    manifest, problem = _json_object(folder / MANIFEST)
    if problem is not None:
        state = f"broken: {problem}; re-export or re-ship it"
    else:
        try:
            verify_bundle(folder)
            state = "verified"
        except BundleError as exc:
            state = str(exc).split(";")[0][:80]
        except _UNREADABLE as exc:  # a manifest of the wrong shape
            state = f"broken: {type(exc).__name__} reading the bundle; re-export it"
    settings, _ = _json_object(folder / "settings.json")
    devices = products = 0
    try:
        devices = pq.read_metadata(folder / "machines.parquet").num_rows
        products = pq.read_metadata(folder / "catalog.parquet").num_rows
    except _UNREADABLE:
        pass
    economics = settings.get("economics")
    params = manifest.get("params")
    days = settings.get("horizon_days")
    return WorldEntry(
        name=_text(manifest.get("name")) or folder.name,
        path=folder,
        devices=devices,
        products=products,
        days=days if isinstance(days, int) and not isinstance(days, bool) else 0,
        currency=_text(economics.get("currency")) if isinstance(economics, dict) else "",
        source=_text(params.get("source_name")) if isinstance(params, dict) else "",
        world_hash=_text(manifest.get("world_hash")),
        state=state,
        verdict=shipped_verdict(manifest),
    )


def shipped_verdict(manifest: dict[str, Any]) -> str:
    """The validation verdict a shipped world's manifest records ("none" when it records none)."""
    validation = manifest.get("validation")
    verdict = validation.get("verdict") if isinstance(validation, dict) else None
    return verdict if isinstance(verdict, str) and verdict else "none"


def _bundles(root: Path) -> list[Path]:
    """The folders directly in `root` that hold a manifest (none if `root` cannot be listed)."""
    try:
        return sorted(p for p in root.iterdir() if p.is_dir() and (p / MANIFEST).is_file())
    except OSError:
        return []


def find_worlds(folders: list[Path] | None = None) -> list[WorldEntry]:
    """Bundles (folders with a manifest.json) directly inside `folders`; default ./worlds and the shipped ones."""
    roots = folders if folders is not None else [LOCAL, SHIPPED]
    seen: set[Path] = set()
    out: list[WorldEntry] = []
    for root in roots:
        for folder in _bundles(root):
            if folder.resolve() in seen:
                continue
            seen.add(folder.resolve())
            out.append(_entry(folder))
    return out


def world_names(roots: list[Path] | None = None) -> list[str]:
    """Names of the bundle folders in ./worlds and the shipped ones (without verifying them)."""
    names: set[str] = set()
    for root in roots if roots is not None else [LOCAL, SHIPPED]:
        names.update(p.name for p in _bundles(root))
    return sorted(names)


def bundle_hash(folder: Path) -> str | None:
    """The world hash a bundle folder's manifest records (None when there is no readable manifest)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return str(manifest.get("world_hash") or "") if isinstance(manifest, dict) else None


def installed_bundles() -> list[Path]:
    """The bundle folders a world name can be looked up in: ./worlds, then the shipped worlds."""
    return [folder for root in (LOCAL, SHIPPED) for folder in _bundles(root)]


def installed_world(world_hash: str) -> Path | None:
    """The installed bundle (`installed_bundles`) whose manifest records `world_hash`, if any (not verified)."""
    if not world_hash:
        return None
    return next((folder for folder in installed_bundles() if bundle_hash(folder) == world_hash), None)


def resolve_world(world: str | Path) -> Path:
    """The bundle folder that `--world` names: a path to a folder, or the name of a shipped world.

    A path that exists is used as given. A bare name (no folder part) is looked up as ./worlds/NAME,
    then among the worlds shipped with AutoVend, so `--world cn20` works in any folder. Anything
    else raises `BundleError` listing the worlds that can be named.
    """
    path = Path(world)
    if path.exists():
        return path
    name = str(world)
    if name and path.name == name and name not in (".", ".."):
        for root in (LOCAL, SHIPPED):
            if (root / name / MANIFEST).is_file():
                return root / name
    known = ", ".join(world_names()) or "none found"
    raise BundleError(
        f"world {name!r} does not exist: it is neither a bundle folder nor the name of a shipped world "
        f"(names: {known}); "
        "pass the folder of a world bundle, e.g. worlds/cn20, or one of those names (`autovend world list`)"
    )

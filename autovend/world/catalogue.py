"""Finding world bundles: the ones shipped with AutoVend, the user's installed ones and those in a folder of the user's.

`install_world` copies a verified bundle into the user's worlds folder (`autovend world install DIR`), where every
door finds it by name (`autovend.world.names`).

The shipped worlds are the bundles under the repository's worlds/; an installed AutoVend carries
copies of them as package data (autovend/_worlds, see setup.py), a checkout or editable install
reads worlds/ itself. `resolve_world` (`autovend.world.names`) turns what `--world` was given, a
folder or a world's name, into a bundle folder.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from autovend.errors import BundleError
from autovend.io import OutputKind, output_dir
from autovend.world import names
from autovend.world.bundle import MANIFEST, bundle_files, verify_bundle
from autovend.world.names import resolve_world as resolve_world
from autovend.world.names import world_names as world_names

# re-exported: the places and the name rule live in `autovend.world.names`
PACKAGED = names.PACKAGED
CHECKOUT = names.CHECKOUT


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


def find_worlds(folders: list[Path] | None = None) -> list[WorldEntry]:
    """Bundles (folders with a manifest.json) directly inside `folders`; default ./worlds and the shipped ones."""
    roots = folders if folders is not None else names.world_roots()
    seen: set[Path] = set()
    out: list[WorldEntry] = []
    for root in roots:
        for folder in names.bundle_folders(root):
            if folder.resolve() in seen:
                continue
            seen.add(folder.resolve())
            out.append(_entry(folder))
    return out


def bundle_hash(folder: Path) -> str | None:
    """The world hash a bundle folder's manifest records (None when there is no readable manifest)."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return str(manifest.get("world_hash") or "") if isinstance(manifest, dict) else None


def installed_bundles() -> list[Path]:
    """The bundle folders a world name can be looked up in: ./worlds, the user's installed worlds, the shipped."""
    return [folder for root in names.world_roots() for folder in names.bundle_folders(root)]


def installed_world(world_hash: str) -> Path | None:
    """The installed bundle (`installed_bundles`) whose manifest records `world_hash`, if any (not verified)."""
    if not world_hash:
        return None
    return next((folder for folder in installed_bundles() if bundle_hash(folder) == world_hash), None)


# ---------------------------------------------------------------------------------------------- install

NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def install_world(bundle: str | Path, name: str | None = None, *, force: bool = False) -> Path:
    """Copy the verified bundle at `bundle` into the user's worlds folder as NAME (default its folder's name).

    The bundle is verified first (every file against its manifest) and again once copied; its files are copied
    byte for byte, so the world hash stays. A name that an installed or shipped world already has is refused
    unless `force` (an installed world of that name is then replaced whole; a shipped one is shadowed, since
    installed worlds are looked up first). Returns the installed folder.
    """
    src = Path(bundle)
    manifest = verify_bundle(src)  # BundleError in words for a folder that is no (intact) bundle
    name = name if name is not None else src.resolve().name
    if not NAME_RULE.fullmatch(name):
        raise BundleError(
            f"{name!r} cannot name a world: use letters, digits, '.', '_' or '-', starting with a letter or digit "
            "(at most 100 characters); give one with --name"
        )
    root = names.install_root()
    target = root / name
    if target.exists() and src.resolve() == target.resolve():
        raise BundleError(f"{src} is the installed world {name!r} itself; nothing to install")
    clash = [f"an installed world at {target}"] if (target / MANIFEST).is_file() else []
    if (names.SHIPPED / name / MANIFEST).is_file():
        clash.append("a world shipped with AutoVend")
    if clash and not force:
        raise BundleError(
            f"the name {name!r} is taken by {' and by '.join(clash)}; give another with --name, or pass --force to "
            "install this one under it (replacing an installed world; a shipped one is then hidden by it)"
        )
    files = [*manifest["files"], MANIFEST]
    root.mkdir(parents=True, exist_ok=True)
    with output_dir(target, OutputKind.WORLD, force=force, marker=False, recognise=bundle_files) as tmp:
        for file in files:
            shutil.copyfile(src / file, tmp / file)
    verify_bundle(target)
    return target

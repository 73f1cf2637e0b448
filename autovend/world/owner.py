"""Which world bundle a command may replace without --force: the output-folder rule for world bundles.

A bundle carries no output marker (loading refuses files its manifest does not list): its manifest says who
wrote it. `autovend export-world` writes a bundle; `autovend world ship` copies one with its validation and
results, and only it writes the manifest's `validation` entry (`SHIPPED_KEY`). Without --force:

- export-world replaces an exported bundle (any world: the same command, run again on a new calibration), never
  a shipped world (its validation and results are `world ship`'s);
- world ship replaces an earlier shipped copy of the same world (the same world hash: shipped again with more
  runs), never another world and never a bundle export-world wrote.

Anything else that is not empty is refused (`autovend.io.output_refusal`); `bundle_refusal` says why in words.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from autovend.io import FORCE_FIX, Recognise

MANIFEST = "manifest.json"
SHIPPED_KEY = "validation"  # only `world ship` writes it into a manifest


def bundle_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest of a bundle in `folder` (any schema), or None if it holds none.

    A manifest.json holding a JSON object with `world_hash` and a `files` object is enough: an older bundle
    is what one re-exports.
    """
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(manifest, dict) or "world_hash" not in manifest or not isinstance(manifest.get("files"), dict):
        return None
    return manifest


def exported_files(folder: Path) -> frozenset[str] | None:
    """The files an earlier exported (not shipped) bundle in `folder` wrote, or None if it holds none."""
    manifest = bundle_manifest(folder)
    if manifest is None or SHIPPED_KEY in manifest:
        return None
    return frozenset([MANIFEST, *manifest["files"]])


def shipped_files(world_hash: str) -> Recognise:
    """The recogniser of `world ship`: the files of an earlier shipped copy of the world `world_hash`."""

    def recognise(folder: Path) -> frozenset[str] | None:
        manifest = bundle_manifest(folder)
        if manifest is None or SHIPPED_KEY not in manifest or manifest.get("world_hash") != world_hash:
            return None
        return frozenset([MANIFEST, *manifest["files"]])

    return recognise


def _which(manifest: dict[str, Any]) -> str:
    return f"{manifest.get('name')!r} (world hash {str(manifest.get('world_hash'))[:12]})"


def bundle_refusal(folder: Path, shipping: dict[str, Any] | None = None) -> str | None:
    """Why a bundle in `folder` may not be replaced without --force (None if it holds none, or may be).

    shipping: the manifest of the bundle `world ship` is shipping; None for `export-world`.
    """
    there = bundle_manifest(folder) if folder.is_dir() else None
    if there is None:
        return None
    shipped = SHIPPED_KEY in there
    if shipping is None:
        if shipped:
            return (
                f"output folder {folder} holds the shipped world {_which(there)}: `autovend world ship` wrote it "
                "with its validation and results, and export-world replaces only a bundle it exported; export to "
                f"data/worlds/NAME and ship from there, {FORCE_FIX}"
            )
        return None
    if there.get("world_hash") != shipping.get("world_hash"):
        kind = "the shipped world" if shipped else "the exported world"
        return (
            f"output folder {folder} holds {kind} {_which(there)}, not the world being shipped {_which(shipping)}; "
            f"`world ship` replaces only an earlier shipped copy of the same world: {FORCE_FIX}"
        )
    if not shipped:
        return (
            f"output folder {folder} holds the bundle {_which(there)} as `autovend export-world` wrote it, not a "
            f"shipped copy; `world ship` replaces only what it shipped: {FORCE_FIX}"
        )
    return None

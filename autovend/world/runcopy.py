"""A world built in memory as a bundle of data files: its identity hash, and the copy a run folder keeps of it.

A run on a world that no bundle holds (a toy world, a world changed in memory) keeps the world beside its records
as a bundle (`write_world_copy`), so the run can be reloaded without unpickling anything; run.json records the
world's content hash (`identity_hash`), the one a bundle of the same content has.
"""

from __future__ import annotations

import weakref
from pathlib import Path

from autovend.canonical import canonical_value, json_bytes
from autovend.errors import BundleError
from autovend.world.bundle import (
    MANIFEST,
    README,
    SETTINGS,
    content_hashes,
    make_manifest,
    read_manifest,
    settings_payload,
    world_files,
    world_hash,
    write_bundle,
)
from autovend.world.model import World

_IDENTITY: weakref.WeakKeyDictionary[World, str] = weakref.WeakKeyDictionary()


def identity_hash(world: World) -> str:
    """The world's hash: the manifest's for a loaded bundle, else computed from its content (kept per world object)."""
    if world.world_hash:
        return world.world_hash
    if world not in _IDENTITY:
        _IDENTITY[world] = world_hash(content_hashes(world))
    return _IDENTITY[world]


def write_world_copy(world: World, out_dir: str | Path, readme: str) -> str:
    """Write `world` as a bundle of data files to `out_dir` (unless a bundle of the same hash is there); its hash.

    For a world built in memory that a run folder keeps beside its records: Parquet tables and JSON only, so
    reading it back runs no code; `load_world` checks every file against the manifest.
    """
    want = identity_hash(world)
    folder = Path(out_dir)
    if (folder / MANIFEST).is_file():
        try:
            if read_manifest(folder).get("world_hash") == want:
                return want
        except BundleError:
            pass  # a damaged copy is replaced below
    files = world_files(world)
    # the settings at full precision: the run was made on this world, not on its rounding (the manifest's content
    # hash is over the rounded values either way, so the copy loads as the world it is: `_file_hashes`)
    files[SETTINGS] = json_bytes(canonical_value(settings_payload(world), digits=17))
    files[README] = readme.encode("utf-8")
    write_bundle(folder, files, make_manifest(world, files, "", "", {}))
    return want

"""Finding world bundles: the ones shipped with AutoVend and the ones in a folder of the user's."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

from autovend.errors import BundleError
from autovend.world.bundle import MANIFEST, verify_bundle

SHIPPED = Path(__file__).resolve().parents[2] / "worlds"  # a checkout's worlds/ (package data once installed)


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


def _entry(folder: Path) -> WorldEntry:
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    try:
        verify_bundle(folder)
        state = "verified"
    except BundleError as exc:
        state = str(exc).split(";")[0][:80]
    settings: dict = {}
    devices = products = 0
    try:
        settings = json.loads((folder / "settings.json").read_text(encoding="utf-8"))
        devices = pq.read_metadata(folder / "machines.parquet").num_rows
        products = pq.read_metadata(folder / "catalog.parquet").num_rows
    except (OSError, ValueError):
        pass
    return WorldEntry(
        name=str(manifest.get("name", folder.name)),
        path=folder,
        devices=devices,
        products=products,
        days=int(settings.get("horizon_days", 0) or 0),
        currency=str(settings.get("economics", {}).get("currency", "")),
        source=str(manifest.get("params", {}).get("source_name", "")),
        world_hash=str(manifest.get("world_hash", "")),
        state=state,
    )


def find_worlds(folders: list[Path] | None = None) -> list[WorldEntry]:
    """Bundles (folders with a manifest.json) directly inside `folders`; default ./worlds and the shipped ones."""
    roots = folders if folders is not None else [Path("worlds"), SHIPPED]
    seen: set[Path] = set()
    out: list[WorldEntry] = []
    for root in roots:
        if not root.is_dir():
            continue
        for folder in sorted(p for p in root.iterdir() if (p / MANIFEST).is_file()):
            if folder.resolve() in seen:
                continue
            seen.add(folder.resolve())
            out.append(_entry(folder))
    return out

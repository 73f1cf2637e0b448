"""The world variants of a sweep: each world as it is, changed by each scenario, and drawn from its identified set.

    expanded, facts, variants = expand(spec, out_dir)     # in memory: the runs a dry run lists
    write_variants(spec, out_dir)                         # the bundles under OUT/variants/ and variants.json

A spec with `scenarios` or `draws` (`autovend.sweep.spec`) is run on every world entry and on its variants:
WORLD.SCENARIO is the world changed by the scenario (`autovend.world.derive`), WORLD.drawNN draw NN of the spec's
draw seed (`autovend.world.draws`). Each variant is a bundle in OUT/variants/LABEL, so the workers (of a local
cluster or an external scheduler sharing the folder) load it like any world, and its runs go to OUT/runs/LABEL as
those of any world. OUT/variants/variants.json lists the variants: label, the world they vary, kind (world,
scenario or draw), the scenario's name or the draw's index and values, and the world hash; the robustness report
(`autovend.sweep.robustness`) reads it. A bundle already there with the right hash is kept (a sweep run again).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from autovend.canonical import canonical_value, json_bytes
from autovend.errors import BundleError, ConfigError
from autovend.io import atomic_write_bytes
from autovend.sweep.spec import SweepSpec, WorldEntry
from autovend.sweep.tasks import WorldFacts
from autovend.world.bundle import MANIFEST, load_world, read_manifest, write_bundle
from autovend.world.catalogue import bundle_hash
from autovend.world.derive import derive_world, write_derived
from autovend.world.draws import draw_bundle, draw_world
from autovend.world.model import World
from autovend.world.names import resolve_world
from autovend.world.ranges import read_ranges
from autovend.world.runcopy import identity_hash
from autovend.world.scenario import Scenario, load_scenario

VARIANTS_DIR = "variants"
VARIANTS_FILE = "variants.json"


@dataclass(frozen=True)
class Variant:
    """One variant of a sweep's world (module docstring)."""

    label: str
    base: str  # the label of the world entry it varies
    kind: str  # world | scenario | draw
    name: str  # the scenario's name, "draw NN", or "" for the world itself
    world_hash: str
    summary: str = ""  # what the scenario changes, or the values drawn
    values: dict[str, Any] = field(default_factory=dict)


def _draw_summary(values: dict[str, Any]) -> str:
    parts = []
    if "u" in values:
        parts.append(f"u {values['u']:.4g}")
    if "elasticity" in values:
        e = values["elasticity"]
        parts.append(f"elasticities {min(e.values()):.2f}-{max(e.values()):.2f}")
    if "lead_shift_days" in values:
        parts.append(f"lead times {values['lead_shift_days']:+d} d")
    for key, what in (("capacity", "capacities"), ("shelf_life_factor", "shelf lives"), ("margins", "margins")):
        if key in values:
            parts.append(f"{what} drawn")
    return ", ".join(parts)


def _entries(spec: SweepSpec) -> list[tuple[WorldEntry, Path, World]]:
    out = []
    for i, w in enumerate(spec.worlds, start=1):
        try:
            folder = resolve_world(w.path)
            out.append((w, folder, load_world(folder)))
        except BundleError as exc:
            raise BundleError(f"worlds, entry {i}: {exc}") from None
    return out


def _scenarios(spec: SweepSpec) -> list[Scenario]:
    out = []
    for i, value in enumerate(spec.scenarios, start=1):
        try:
            out.append(load_scenario(value))
        except ConfigError as exc:
            raise ConfigError(f"scenarios, entry {i}: {exc}") from None
    return out


def expand(spec: SweepSpec, out_dir: str | Path) -> tuple[SweepSpec, dict[str, WorldFacts], list[Variant]]:
    """The spec with every world's variants as world entries, the variants' facts by label, and the variants.

    Nothing is written: the variants are derived and drawn in memory (their folders are where `write_variants`
    puts them). A spec without scenarios and draws comes back as it is, with no facts and no variants.
    """
    if not spec.scenarios and spec.draws is None:
        return spec, {}, []
    root = Path(out_dir).resolve() / VARIANTS_DIR
    scenarios = _scenarios(spec)
    worlds: list[WorldEntry] = []
    facts: dict[str, WorldFacts] = {}
    variants: list[Variant] = []
    for entry, folder, base in _entries(spec):
        worlds.append(entry)
        variants.append(Variant(entry.label, entry.label, "world", "", base.world_hash))
        for sc in scenarios:
            label = f"{entry.label}.{sc.name}"
            world = derive_world(base, sc)
            facts[label] = WorldFacts(str(root / label), identity_hash(world), world.horizon_days)
            worlds.append(WorldEntry(path=root / label, name=label))
            variants.append(Variant(label, entry.label, "scenario", sc.name, identity_hash(world), sc.summary))
        if spec.draws is not None:
            ranges = read_ranges(read_manifest(folder), f"worlds entry {entry.label} ({folder})")
            for index in range(1, spec.draws.n + 1):
                label = f"{entry.label}.draw{index:02d}"
                world, values = draw_world(base, ranges, spec.draws.seed, index)
                facts[label] = WorldFacts(str(root / label), identity_hash(world), world.horizon_days)
                worlds.append(WorldEntry(path=root / label, name=label))
                variants.append(
                    Variant(
                        label,
                        entry.label,
                        "draw",
                        f"draw {index:02d}",
                        identity_hash(world),
                        _draw_summary(values),
                        canonical_value(values),
                    )
                )
    expanded = spec.model_copy(update={"worlds": worlds, "scenarios": [], "draws": None})
    return expanded, facts, variants


def write_variants(spec: SweepSpec, out_dir: str | Path) -> list[Variant]:
    """Write every variant's bundle under OUT/variants (keeping those already there) and variants.json."""
    if not spec.scenarios and spec.draws is None:
        return []
    root = Path(out_dir) / VARIANTS_DIR
    root.mkdir(parents=True, exist_ok=True)
    _, _, variants = expand(spec, out_dir)
    scenarios = {sc.name: sc for sc in _scenarios(spec)}
    for entry, folder, base in _entries(spec):
        manifest = read_manifest(folder)
        for v in (v for v in variants if v.base == entry.label and v.kind != "world"):
            target = root / v.label
            if (target / MANIFEST).is_file() and bundle_hash(target) == v.world_hash:
                continue
            if v.kind == "scenario":
                write_derived(folder, base, scenarios[v.name], target, force=True)
            else:
                assert spec.draws is not None
                index = int(v.name.split()[-1])
                ranges = read_ranges(manifest, str(folder))
                _, files, man, _ = draw_bundle(base, manifest, ranges, spec.draws.seed, index)
                write_bundle(target, files, man, force=True)
    atomic_write_bytes(root / VARIANTS_FILE, json_bytes(canonical_value([asdict(v) for v in variants])))
    return variants


def read_variants(out_dir: str | Path) -> list[Variant]:
    """The variants a sweep's folder lists (none when it has no variants.json, or an unreadable one)."""
    path = Path(out_dir) / VARIANTS_DIR / VARIANTS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return [Variant(**{**d, "values": d.get("values") or {}}) for d in data]
    except (OSError, ValueError, TypeError):
        return []

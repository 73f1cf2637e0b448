"""The world a run is checked against: found by the hash run.json records, never inside the run folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autovend.errors import AutoVendError
from autovend.world.model import World


class WorldNotFoundError(AutoVendError):
    """The world a run was made on is not installed (the message names its hash)."""


def _inside(path: Path, folder: Path) -> bool:
    """Whether `path` is `folder` or lies under it (symbolic links resolved)."""
    try:
        path.resolve().relative_to(folder.resolve())
    except (OSError, ValueError):
        return False
    return True


def find_world(run_dir: Path, meta: dict[str, Any], world: str | Path | None = None) -> tuple[World, str]:
    """The world of the run, found by the hash run.json records, and where it was found.

    Only worlds this machine vouches for are candidates: `world` (a bundle folder or a world's name, given by
    the caller), the bundle at the recorded `world_path`, and the shipped and installed worlds. Nothing inside
    the run folder is one (its own `world/` bundle, a `world.pkl`, a `world_path` that points back into it):
    the folder is what is being checked, so the world it was scored on cannot come from it.
    """
    from autovend.world.bundle import load_world
    from autovend.world.catalogue import bundle_hash, installed_bundles
    from autovend.world.names import resolve_world

    want = str(meta["world_hash"])
    candidates: list[Path] = []
    if world is not None:
        given = resolve_world(world)
        if _inside(given, run_dir):
            raise WorldNotFoundError(
                f"{given} lies inside the run folder {run_dir}: the world a run is checked against must come from "
                "elsewhere (a shipped or installed world, or a bundle you keep); copy it out if you trust it"
            )
        candidates.append(given)
    recorded = meta.get("world_path")
    if isinstance(recorded, str) and recorded and world is None:
        candidates.append(Path(recorded))
    if world is None:
        candidates += installed_bundles()
    for folder in candidates:
        if _inside(folder, run_dir):
            continue
        if bundle_hash(folder) == want:
            return load_world(folder), str(folder)
    derived = _derived_world(run_dir, meta, [c for c in candidates if not _inside(c, run_dir)])
    if derived is not None:
        return derived
    if world is not None:
        raise WorldNotFoundError(f"{world} is not the world of {run_dir}: the run was made on world hash {want}")
    raise WorldNotFoundError(
        f"the world of {run_dir} is not installed: the run was made on world "
        f"{meta.get('world_name')!r} with world hash {want}; install the bundle with that hash in ./worlds "
        "(or give its folder with --world) and verify again"
    )


def _derived_world(run_dir: Path, meta: dict[str, Any], candidates: list[Path]) -> tuple[World, str] | None:
    """The world of a run on a world derived in memory, rebuilt from its recorded base and scenario; None if not.

    The base is a candidate (never inside the run folder) of the recorded base hash; the world is that base changed
    by the recorded scenario, if that gives the run's world hash. The scenario is plain data, checked as a scenario
    file is (`autovend.world.scenario`): applying it runs no code.
    """
    from autovend.errors import ConfigError, RunFolderError
    from autovend.evaluation.runsave import RUN_FILE
    from autovend.world.bundle import load_world
    from autovend.world.catalogue import bundle_hash
    from autovend.world.derive import derive_world
    from autovend.world.runcopy import identity_hash
    from autovend.world.scenario import parse_scenario

    how = meta.get("derivation")
    if not isinstance(how, dict) or not isinstance(how.get("base_world_hash"), str):
        return None
    base = next((c for c in candidates if bundle_hash(c) == how["base_world_hash"]), None)
    if base is None:
        return None
    try:
        scenario = parse_scenario(how.get("scenario"), f"{run_dir}/{RUN_FILE}, derivation.scenario")
        world = derive_world(load_world(base), scenario)
    except ConfigError as exc:
        raise RunFolderError(f"{run_dir}/{RUN_FILE} records a derivation that cannot be applied: {exc}") from None
    if identity_hash(world) != meta.get("world_hash"):
        return None
    return world, f"{base} changed by scenario {scenario.name}"

"""Save a whole run (a `Snapshot`: state, operating records, hidden records) to one file and read it back exactly.

The file is a pickle of a dict: format tag and version, the AutoVend version, the world's name and
content fingerprint, the simulator state, the agent-visible SQLite database as `serialize()` bytes
and the hidden log. Loading refuses a file made on a different world. A pickle can name any function
for its loader to call, so checkpoints are read by an allow-list unpickler (`autovend.io.load_pickle_bytes`):
plain values, numpy arrays and the simulator's own state classes (`STATE_CLASSES`); a file that names
anything else is refused before it runs. `Simulator.save` and `Simulator.load` use this module.
"""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from autovend import __version__
from autovend.errors import CheckpointError
from autovend.io import UnsafePickleError, load_pickle_bytes, write_pickle
from autovend.sim import hidden, inventory, results, state
from autovend.sim.state import Snapshot
from autovend.world.model import World

FORMAT = "autovend-sim-checkpoint"
VERSION = 2  # 2: the state is an `autovend.sim.state.SimState` (was `simulator._State`)
# the classes a checkpoint may name besides plain values: those the simulator's state is made of
STATE_CLASSES: frozenset[tuple[str, str]] = frozenset(
    (cls.__module__, cls.__qualname__)
    for module in (state, results, inventory, hidden)
    for cls in vars(module).values()
    if isinstance(cls, type) and cls.__module__ == module.__name__
)


def world_fingerprint(world: World) -> str:
    """A SHA-256 of everything in a world that the simulator reads (tables, arrays, settings, conditions)."""
    h = hashlib.sha256()
    h.update(world.name.encode("utf-8"))
    for frame in (world.machines, world.catalog, world.weather, world.forecast, world.calendar):
        h.update("|".join(map(str, frame.columns)).encode("utf-8"))
        h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    dm = world.demand_model
    for array in (dm.b, dm.U):
        h.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    h.update(dm.settings.model_dump_json().encode("utf-8"))
    h.update(world.economics.model_dump_json().encode("utf-8"))
    h.update(repr((dm.shock, world.start_date.isoformat(), world.timezone, world.country)).encode())
    if not world.conditions.empty:  # a scenario's conditions (a world without any keeps its fingerprint)
        h.update(world.conditions.model_dump_json().encode("utf-8"))
    return h.hexdigest()


def save(snapshot: Snapshot, world: World, path: str | Path) -> Path:
    """Write `snapshot` (of a run on `world`) to `path` atomically; return the path."""
    path = Path(path)
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "autovend_version": __version__,
        "world_name": world.name,
        "world_fingerprint": world_fingerprint(world),
        "state": snapshot.state,
        "records": snapshot.records,
        "hidden": snapshot.hidden,
    }
    write_pickle(path, payload)
    return path


def read_payload(path: str | Path, *, fmt: str, version: int, what: str, remedy: str = "") -> dict[str, Any]:
    """The dict pickled at `path` after checking its format tag and version (shared by every checkpoint kind).

    `what` names the kind in messages ("simulator checkpoint", "tool-session checkpoint", "run checkpoint");
    `remedy` is appended to each message to say what to do instead. Raises CheckpointError.
    """
    path = Path(path)
    try:
        payload = load_pickle_bytes(path.read_bytes(), STATE_CLASSES)
    except UnsafePickleError as exc:
        raise CheckpointError(
            f"refused to load the {what} {path}: {exc}; AutoVend never runs code from a file it reads{remedy}"
        ) from exc
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError, ValueError) as exc:
        raise CheckpointError(f"cannot read the {what} {path}: {exc}{remedy}") from exc
    if not isinstance(payload, dict) or payload.get("format") != fmt:
        raise CheckpointError(f"{path} is not an AutoVend {what}{remedy}")
    if payload.get("version") != version:
        raise CheckpointError(
            f"{path} is a {what} of version {payload.get('version')}, this AutoVend reads version {version}"
            f"{remedy or '; load it with the AutoVend version that wrote it'}"
        )
    return payload


def load(path: str | Path, world: World) -> Snapshot:
    """The snapshot saved at `path`; `world` must be the world it was saved from (CheckpointError otherwise)."""
    path = Path(path)
    payload = read_payload(path, fmt=FORMAT, version=VERSION, what="simulator checkpoint")
    if payload["world_fingerprint"] != world_fingerprint(world):
        raise CheckpointError(
            f"{path} was saved on world {payload['world_name']!r} and does not match world {world.name!r} "
            "(different content); load it with the world it was saved from"
        )
    return Snapshot(state=payload["state"], records=payload["records"], hidden=payload["hidden"])

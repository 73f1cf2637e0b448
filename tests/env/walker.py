"""A walker over the objects an agent is handed: does any attribute path reach the privileged truth?

It follows what ordinary attribute access can follow: `__dict__` and `__slots__` values, every name
`dir()` lists (properties are read, methods are not called), bound methods' `__self__` and
`__func__`, functions' closures and defaults, `functools.partial`, weak references, and the items of
dicts, lists, tuples and sets. It does not follow module globals, classes or the garbage collector
(nothing in-process can be hidden from those; see autovend.env.boundary).
"""

from __future__ import annotations

import datetime as dt
import functools
import pathlib
import types
import weakref
from typing import Any

import numpy as np
import pandas as pd

from autovend.arrays.core import ArraySim
from autovend.arrays.facts import ArrayFacts
from autovend.arrays.state import ArrayState
from autovend.demand.model import DemandModel, ShockProcess
from autovend.demand.settings import DemandSettings
from autovend.env.boundary import Sealed
from autovend.env.episode import Episode
from autovend.sim import Simulator
from autovend.sim.hidden import HiddenLog
from autovend.sim.records import RecordStore
from autovend.sim.state import SimState
from autovend.tools.context import ToolContext
from autovend.tools.sql import SqlSandbox
from autovend.tools.views import Views
from autovend.world.model import World

PRIVILEGED = (Simulator, World, HiddenLog, SimState, RecordStore, Episode, Sealed, ToolContext, Views, SqlSandbox)
PRIVILEGED += (DemandModel, DemandSettings, ShockProcess)
PRIVILEGED += (ArraySim, ArrayFacts, ArrayState)  # the array envs' simulator (autovend.arrays.env)
LEAVES = (str, bytes, bytearray, int, float, complex, bool, type(None), range, type, types.ModuleType)
LEAVES += (np.generic, dt.date, dt.time, dt.timedelta, pathlib.PurePath)  # values whose attributes make new values


# pydantic's per-class field tables (FieldInfo objects, the same for every instance): read on an instance they are
# deprecated (a warning per walk) and hold nothing an agent could follow
CLASS_ONLY = frozenset({"model_fields", "model_computed_fields"})


def find_privileged(root: Any, world: World, max_objects: int = 200_000) -> list[str]:
    """Attribute paths from `root` to a privileged object or to an array holding b (base attraction) or U."""
    b = np.asarray(world.demand_model.b)
    u = np.asarray(world.demand_model.U, dtype=float)
    found: list[str] = []
    seen: set[int] = set()
    stack: list[tuple[Any, str]] = [(root, "root")]
    while stack:
        obj, path = stack.pop()
        if id(obj) in seen or isinstance(obj, LEAVES):
            continue
        seen.add(id(obj))
        if len(seen) > max_objects:
            raise AssertionError(f"more than {max_objects} objects reachable from the root; is the walk looping?")
        if isinstance(obj, PRIVILEGED):
            found.append(f"{path}: {type(obj).__name__}")
            continue
        if isinstance(obj, np.ndarray):
            if _holds(obj, b) or _holds(obj, u):
                found.append(f"{path}: an array holding the world's demand parameters")
            continue
        if isinstance(obj, (pd.DataFrame, pd.Series)):
            if isinstance(obj, pd.DataFrame) and {"U", "b"} & set(map(str, obj.columns)):
                found.append(f"{path}: a table with demand parameters (b or U)")
            stack.append((obj.to_numpy(), f"{path}.to_numpy()"))
            continue
        stack.extend(_children(obj, path))
    return found


def _holds(arr: np.ndarray, truth: np.ndarray) -> bool:
    if arr.dtype.kind not in "fiu" or arr.size == 0:
        return False
    if np.shares_memory(arr, truth):
        return True
    return arr.shape == truth.shape and bool(np.allclose(arr, truth))


def _children(obj: Any, path: str) -> list[tuple[Any, str]]:
    out: list[tuple[Any, str]] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += [(k, f"{path}[key {k!r}]"), (v, f"{path}[{k!r}]")]
        return out
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [(v, f"{path}[{i}]") for i, v in enumerate(obj)]
    if isinstance(obj, types.MethodType):
        return [(obj.__self__, f"{path}.__self__"), (obj.__func__, f"{path}.__func__")]
    if isinstance(obj, types.FunctionType):
        cells = obj.__closure__ or ()
        out += [(c.cell_contents, f"{path}.__closure__[{i}]") for i, c in enumerate(cells) if _filled(c)]
        out += [(obj.__defaults__, f"{path}.__defaults__"), (obj.__kwdefaults__, f"{path}.__kwdefaults__")]
        return out
    if isinstance(obj, functools.partial):
        return [(obj.func, f"{path}.func"), (obj.args, f"{path}.args"), (obj.keywords, f"{path}.keywords")]
    if isinstance(obj, weakref.ref):
        return [(obj(), f"{path}()")]
    if isinstance(obj, (types.BuiltinFunctionType, types.BuiltinMethodType)):
        return [(getattr(obj, "__self__", None), f"{path}.__self__")]
    if hasattr(obj, "__dict__"):
        out += [(v, f"{path}.{k}") for k, v in vars(obj).items()]
    for cls in type(obj).__mro__:
        for name in getattr(cls, "__slots__", ()):
            if hasattr(obj, name):
                out.append((getattr(obj, name), f"{path}.{name}"))
    for name in dir(obj):
        if name.startswith("__") or name in CLASS_ONLY:
            continue
        try:
            value = getattr(obj, name)  # properties run; methods come back bound, uncalled
        except Exception:  # noqa: BLE001 - a property that refuses (e.g. before reset) hides nothing
            continue
        out.append((value, f"{path}.{name}"))
    return out


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True

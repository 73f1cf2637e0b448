"""What a run was made with: Python, package versions, the CPU features numpy used, thread settings.

    here = current_provenance()
    meta["provenance"] = here.to_json()                        # recorded in run.json
    provenance_differences(Provenance.from_json(old), here)    # ["numpy 2.1.0 -> 2.2.1", ...]

Two runs of the same world, agent and seed give the same numbers only if they ran on the same
numeric stack: the versions of autovend, numpy, scipy, pandas, pyarrow and statsmodels, the
Python version, and the SIMD extensions numpy's dispatched kernels used (`cpu_features`: the
sorted names numpy reports as enabled, after `NPY_DISABLE_CPU_FEATURES`). `env` holds the
variables that change numpy's CPU features or the BLAS thread count, when they are set.
"""

from __future__ import annotations

import importlib
import os
import platform
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from autovend import __version__

PACKAGES = ("autovend", "numpy", "scipy", "pandas", "pyarrow", "statsmodels")
ENV_VARS = (
    "NPY_DISABLE_CPU_FEATURES",
    "NPY_ENABLE_CPU_FEATURES",
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)
NOT_INSTALLED = "not installed"


@dataclass(frozen=True)
class Provenance:
    """The software and CPU a run was made with.

    python: the interpreter version (e.g. "3.11.4"). machine: the CPU architecture (e.g. "x86_64").
    packages: version of each of `PACKAGES` ("not installed" when absent). cpu_features: the SIMD
    extensions numpy ran with, sorted. env: the `ENV_VARS` that were set, with their values.
    """

    python: str
    machine: str
    packages: Mapping[str, str] = field(default_factory=dict)
    cpu_features: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The record as plain JSON values (the `provenance` entry of run.json)."""
        return {
            "python": self.python,
            "machine": self.machine,
            "packages": dict(self.packages),
            "cpu_features": list(self.cpu_features),
            "env": dict(self.env),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Provenance:
        """The record written by `to_json`; raises ValueError naming the first entry that is not as written."""
        if not isinstance(data, Mapping):
            raise ValueError(f"a provenance record is an object, got {type(data).__name__}")
        packages, features, env = data.get("packages", {}), data.get("cpu_features", []), data.get("env", {})
        if not isinstance(packages, Mapping) or not isinstance(env, Mapping) or not isinstance(features, list):
            raise ValueError("provenance: packages and env must be objects and cpu_features a list")
        return cls(
            python=str(data.get("python", "?")),
            machine=str(data.get("machine", "?")),
            packages={str(k): str(v) for k, v in packages.items()},
            cpu_features=tuple(sorted(str(f) for f in features)),
            env={str(k): str(v) for k, v in env.items()},
        )


def package_version(name: str) -> str:
    """The installed version of a distribution ("not installed" when absent); autovend's from the package."""
    if name == "autovend":
        return __version__
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return NOT_INSTALLED


def numpy_cpu_features() -> tuple[str, ...]:
    """The SIMD extensions numpy runs with (enabled in its CPU feature table), sorted; () without numpy."""
    for module in ("numpy._core._multiarray_umath", "numpy.core._multiarray_umath"):  # numpy 2, numpy 1
        try:
            table = importlib.import_module(module).__cpu_features__
        except (ImportError, AttributeError):
            continue
        return tuple(sorted(str(name) for name, enabled in table.items() if enabled))
    return ()


def current_provenance() -> Provenance:
    """The provenance of this process."""
    return Provenance(
        python=platform.python_version(),
        machine=platform.machine(),
        packages={name: package_version(name) for name in PACKAGES},
        cpu_features=numpy_cpu_features(),
        env={name: os.environ[name] for name in ENV_VARS if name in os.environ},
    )


def provenance_differences(before: Provenance, after: Provenance) -> list[str]:
    """What differs from `before` to `after`, one readable line per item ([] when they are the same).

    e.g. ["numpy 2.1.0 -> 2.2.1", "CPU features: without AVX512F", "env OMP_NUM_THREADS unset -> 1"].
    """
    out = []
    if before.python != after.python:
        out.append(f"python {before.python} -> {after.python}")
    if before.machine != after.machine:
        out.append(f"machine {before.machine} -> {after.machine}")
    for name in sorted(set(before.packages) | set(after.packages)):
        a, b = before.packages.get(name, NOT_INSTALLED), after.packages.get(name, NOT_INSTALLED)
        if a != b:
            out.append(f"{name} {a} -> {b}")
    gone = sorted(set(before.cpu_features) - set(after.cpu_features))
    new = sorted(set(after.cpu_features) - set(before.cpu_features))
    if gone or new:
        parts = ([f"without {' '.join(gone)}"] if gone else []) + ([f"with {' '.join(new)}"] if new else [])
        out.append("CPU features: " + ", ".join(parts))
    for name in sorted(set(before.env) | set(after.env)):
        was, now = before.env.get(name), after.env.get(name)
        if was != now:
            out.append(f"env {name} {'unset' if was is None else repr(was)} -> {'unset' if now is None else repr(now)}")
    return out

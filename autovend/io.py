"""Small I/O helpers at the edges: atomic writes (folders, bytes, text, pickles), the output-folder guard.

Every command writes its output folder through `output_dir`: the folder must be absent, empty, or hold
the same command's earlier output, recognised by the marker file `OUTPUT_MARKER` it wrote there (the
kind of output and the files written, no timestamps, so a committed folder stays the same bytes).
Anything else is refused unless `force`; nothing is deleted before the new folder is complete.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from autovend.errors import OutputExistsError, OutputWriteError


class OutputKind(StrEnum):
    """The kinds of output folder a command writes; the marker names one, and only the same kind replaces it."""

    SOURCE = "source"  # synth -o, adapt -o
    TRUTH = "truth"  # synth --truth
    CALIBRATION = "calibration"  # calibrate -o, validate --calibration-out
    CALIBRATION_REPORT = "calibration-report"  # calibrate --report
    VALIDATION_REPORT = "validation-report"  # validate -o
    WORLD = "world"  # export-world -o (recognised by its manifest.json, no marker)
    WORLD_DRAWS = "world-draws"  # world draw -o: a folder of drawn bundles and draws.json
    SWEEP = "sweep"  # sweep --out (continued, not replaced: autovend.sweep.folder)
    COMPARISON = "comparison"  # compare --out
    DEX = "dex-audits"  # synth --dex: the records as EVA-DTS audit files


OUTPUT_MARKER = ".autovend-output.json"
MARKER_NOTE = "written by autovend: the files it wrote here; a later run of the same kind replaces this folder"
FORCE_FIX = "choose another folder, or pass --force to replace it"
MAX_NAMES_SHOWN = 5  # foreign files named in a refusal before "... and N more"

# given an existing, non-empty folder: the files an earlier output of this kind wrote there, or None if it
# holds no such output (used where a marker cannot be written, e.g. a world bundle recognised by its manifest)
Recognise = Callable[[Path], frozenset[str] | None]


def _umask() -> int:
    """The process's umask (reading it means setting it, so it is set back at once)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _remove(path: Path) -> None:
    """Remove a folder tree, a file or a symlink (never following the link)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


@contextlib.contextmanager
def atomic_dir(target: str | Path) -> Iterator[Path]:
    """Yield an empty temporary folder that replaces `target` only if the block succeeds.

    On any exception the temporary folder is removed and an existing `target` is left untouched,
    so a failed run never destroys earlier artefacts. Whatever `target` was (a folder, a file) is
    replaced whole: check it first (`check_output_dir`).
    """
    target = Path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    except OSError as exc:
        raise OutputWriteError(
            f"cannot write the output folder {target}: {exc.strerror or exc}; choose a folder you can write to"
        ) from exc
    os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700; the folder gets the usual mode
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if target.exists() or target.is_symlink():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        if old.exists() or old.is_symlink():
            _remove(old)
        os.replace(target, old)
    os.replace(tmp, target)
    if old is not None:
        _remove(old)


# ------------------------------------------------------------------------------------------- output folders


@dataclass(frozen=True)
class OutputMarker:
    """The content of `OUTPUT_MARKER`: the kind of output and the files (relative POSIX paths) written."""

    kind: str
    files: tuple[str, ...]

    def to_bytes(self) -> bytes:
        """The marker file's bytes: sorted keys, sorted files, no timestamps (same output, same bytes)."""
        body = {"kind": self.kind, "files": sorted(self.files), "note": MARKER_NOTE}
        return (json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def read_marker(folder: str | Path) -> OutputMarker | None:
    """The marker of `folder`, or None if it has none or it is not one AutoVend wrote."""
    try:
        body = json.loads((Path(folder) / OUTPUT_MARKER).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(body, dict):
        return None
    kind, files = body.get("kind"), body.get("files")
    if not isinstance(kind, str) or not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        return None
    return OutputMarker(kind=kind, files=tuple(files))


def tree_files(folder: Path) -> tuple[frozenset[str], frozenset[str]]:
    """(files, folders) under `folder` as relative POSIX paths; a symlink counts as a file and is not followed."""
    files: set[str] = set()
    dirs: set[str] = set()
    for root, dirnames, filenames in os.walk(folder):
        rel = Path(root).relative_to(folder)
        for name in list(dirnames):
            path = Path(root) / name
            if path.is_symlink():
                files.add((rel / name).as_posix())
                dirnames.remove(name)
            else:
                dirs.add((rel / name).as_posix())
        files.update((rel / name).as_posix() for name in filenames)
    return frozenset(files), frozenset(dirs)


def _real(target: str | Path) -> Path:
    """`target`, or the folder it points to if it is a symbolic link (the link is kept, its folder replaced)."""
    target = Path(target)
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def _names(paths: Iterable[str]) -> str:
    names = sorted(paths)
    shown = ", ".join(names[:MAX_NAMES_SHOWN])
    return shown + (f" and {len(names) - MAX_NAMES_SHOWN} more" if len(names) > MAX_NAMES_SHOWN else "")


def _parents(files: Iterable[str]) -> set[str]:
    return {p.as_posix() for f in files for p in Path(f).parents if p.as_posix() != "."}


def output_refusal(target: str | Path, kind: str, recognise: Recognise | None = None) -> str | None:
    """Why `target` may not be replaced by an output of `kind` without --force, or None if it may.

    It may if it is absent, holds no file (only empty folders, e.g. after DVC removed the files it
    tracks), or holds only files an earlier output of `kind` wrote there: the files its marker lists
    (or, with `recognise`, the files that function names) and folders on their way.
    """
    target = _real(target)
    if not target.exists():
        return None
    if not target.is_dir():
        return f"{target} is a file, not a folder; {FORCE_FIX}"
    files, dirs = tree_files(target)
    if not files:
        return None
    if recognise is not None:
        owned = recognise(target)
        if owned is None:
            return f"output folder {target} is not empty and holds no {kind} output; {FORCE_FIX}"
    else:
        marker = read_marker(target)
        if marker is None:
            how = "an unreadable" if OUTPUT_MARKER in files else f"no {OUTPUT_MARKER}"
            return (
                f"output folder {target} is not empty and is not an earlier {kind} output of autovend "
                f"({how} marker); {FORCE_FIX}"
            )
        if marker.kind != kind:
            return f"output folder {target} holds a {marker.kind} output, not a {kind} output; {FORCE_FIX}"
        owned = frozenset([*marker.files, OUTPUT_MARKER])
    foreign = (files - owned) | (dirs - _parents(owned))
    if foreign:
        return (
            f"output folder {target} holds files autovend did not write there: {_names(foreign)}; move them out, "
            f"{FORCE_FIX}"
        )
    return None


def check_output_dir(
    target: str | Path,
    kind: str,
    *,
    force: bool = False,
    inputs: Iterable[str | Path | None] = (),
    recognise: Recognise | None = None,
) -> None:
    """Raise `OutputExistsError` unless `target` may take an output of `kind` (see `output_refusal`).

    `force` allows replacing anything but a folder that is or holds one of `inputs` (replacing it would
    delete the input) or lies inside one (writing it would change the input): those are refused always.
    """
    target = Path(target)
    out = target.resolve()
    for given in inputs:
        if given is None:
            continue
        path = Path(given)
        if path.resolve().is_relative_to(out):
            raise OutputExistsError(
                f"output folder {target} is or contains the input {path}; choose an output folder elsewhere"
            )
        if out.is_relative_to(path.resolve()):
            raise OutputExistsError(
                f"output folder {target} lies inside the input folder {path}; choose an output folder elsewhere"
            )
    if force:
        return
    reason = output_refusal(target, kind, recognise)
    if reason is not None:
        raise OutputExistsError(reason)


def check_distinct_outputs(*targets: str | Path | None) -> None:
    """Raise `OutputExistsError` if two output folders of one command are the same or one holds the other."""
    given = [Path(t) for t in targets if t is not None]
    for i, a in enumerate(given):
        for b in given[i + 1 :]:
            ra, rb = a.resolve(), b.resolve()
            if ra.is_relative_to(rb) or rb.is_relative_to(ra):
                raise OutputExistsError(f"the output folders {a} and {b} overlap; give each output its own folder")


@contextlib.contextmanager
def output_dir(
    target: str | Path,
    kind: str,
    *,
    force: bool = False,
    marker: bool = True,
    recognise: Recognise | None = None,
) -> Iterator[Path]:
    """`atomic_dir` for a command's output folder of `kind`, checked first (`check_output_dir`).

    After the block succeeds the marker (`OUTPUT_MARKER`: the kind and every file written) is added,
    unless `marker` is False (a folder recognised otherwise, through `recognise`); then the folder
    replaces `target`. A failure leaves `target` as it was.
    """
    check_output_dir(target, kind, force=force, recognise=recognise)
    with atomic_dir(_real(target)) as tmp:
        yield tmp
        if marker:
            files, _ = tree_files(tmp)
            (tmp / OUTPUT_MARKER).write_bytes(OutputMarker(kind=kind, files=tuple(files)).to_bytes())


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write a file via a temporary sibling and an atomic rename (the parent folder is made if missing).

    A reader sees the old file or the new one, never a partial one; on any error the old file stays.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; a written file gets the usual mode
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write a UTF-8 text file atomically (see `atomic_write_bytes`); newlines are written as given."""
    atomic_write_bytes(path, text.encode("utf-8"))


def write_pickle(path: str | Path, obj: Any) -> None:
    """Pickle `obj` (highest protocol) into a file atomically (see `atomic_write_bytes`)."""
    atomic_write_bytes(path, pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


# Globals any checkpoint may name: containers and dates from the standard library, and what numpy needs to rebuild
# its arrays, scalars and random generators. Nothing here runs code of the file's choosing.
PLAIN_GLOBALS: frozenset[tuple[str, str]] = frozenset(
    {
        ("builtins", "set"),
        ("builtins", "frozenset"),
        ("builtins", "complex"),
        ("builtins", "slice"),
        ("builtins", "bytearray"),
        ("collections", "OrderedDict"),
        ("collections", "defaultdict"),
        ("collections", "deque"),
        ("datetime", "date"),
        ("datetime", "datetime"),
        ("datetime", "timedelta"),
        ("numpy", "dtype"),
        ("numpy", "ndarray"),
        *(
            (f"{core}.multiarray", name)
            for core in ("numpy.core", "numpy._core")
            for name in ("_reconstruct", "scalar")
        ),
        *((f"{core}.numeric", "_frombuffer") for core in ("numpy.core", "numpy._core")),
        *(("numpy.random._pickle", f"__{kind}_ctor") for kind in ("generator", "bit_generator", "randomstate")),
        *((f"numpy.random._{name.lower()}", name) for name in ("PCG64", "MT19937", "Philox", "SFC64")),
        ("numpy.random._pcg64", "PCG64DXSM"),
        ("numpy.random.bit_generator", "SeedSequence"),
        ("numpy.random.bit_generator", "__pyx_unpickle_SeedSequence"),
        *(("numpy.dtypes", f"{kind}DType") for kind in ("Float64", "Float32", "Int64", "Int32", "Int8", "Bool")),
        *(("numpy.dtypes", f"{kind}DType") for kind in ("UInt8", "Int16", "UInt64", "UInt32", "Object", "Str")),
    }
)


class UnsafePickleError(pickle.UnpicklingError):
    """A pickle names a global outside the reader's allow-list (the message names it)."""


class _AllowListUnpickler(pickle.Unpickler):
    """An unpickler that resolves only the globals it is given: a file cannot make it call anything else."""

    def __init__(self, file: Any, allowed: frozenset[tuple[str, str]], class_modules: frozenset[str]) -> None:
        super().__init__(file)
        self._allowed = allowed
        self._class_modules = class_modules

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self._allowed:
            return super().find_class(module, name)
        if module in self._class_modules and "." not in name:
            found = getattr(sys.modules.get(module), name, None)
            if isinstance(found, type) and found.__module__ == module:  # a class of that module, never a function
                return found
        raise UnsafePickleError(f"it names {module}.{name}, which is not one of the plain values a checkpoint holds")


def load_pickle_bytes(data: bytes, allowed: Iterable[tuple[str, str]] = (), class_modules: Iterable[str] = ()) -> Any:
    """Unpickle `data` resolving only plain values and the globals named; UnsafePickleError for anything else.

    Resolved: `PLAIN_GLOBALS`, the `allowed` (module, name) pairs, and the classes (never the functions) defined
    in `class_modules`, modules already imported. The Python documentation's "restricting globals": every class
    or function a pickle can reach goes through `find_class`, so a file that names `os.system` (or anything
    outside the list) is refused before it runs.
    """
    import io as _io

    unpickler = _AllowListUnpickler(_io.BytesIO(data), PLAIN_GLOBALS | frozenset(allowed), frozenset(class_modules))
    return unpickler.load()

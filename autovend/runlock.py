"""One writer per run folder (and per output folder): an advisory lock held while a command writes it.

`hold_run_folder` is what `run_episode` holds while it writes a run folder; `hold_output_folder` what a command
holds while it checks and replaces a whole output folder (`world ship`, `export-world`), on a lock file beside it.

The lock is the kernel's `flock` on the file `LOCK_FILE` in the run folder, taken without waiting: a
second process (`autovend run --resume`, the console, a sweep's worker) that finds the folder locked
stops at once with `RunFolderBusyError`, naming the process that holds it. The kernel releases the lock
when its process ends, however it ends (even SIGKILL), so a dead process never blocks a folder; the file
itself is removed on a normal exit. A file left by a process that was killed (its process id no longer
running, or the lock free) is a *stale* lock: it is reported (`RunLock.stale`) and taken over, which is
safe because holding the kernel lock proves that no live process writes the folder.

The lock protects folders on a local disk; `flock` over some network file systems is not reliable. On a
platform without `fcntl` (Windows) no lock is taken.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from autovend.errors import AutoVendError, OutputBusyError, OutputWriteError, RunFolderBusyError, RunFolderError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".autovend-run.lock"
RELEASED = "was being released by another process as this one started; run the command again"
OUTPUT_LOCK_SUFFIX = ".autovend-lock"  # `.NAME.autovend-lock` beside an output folder NAME (`hold_output_folder`)
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunLock:
    """A held lock: its file, and what a stale lock file left by a killed process said (None if there was none)."""

    path: Path
    stale: str | None = None


def _holder(text: str) -> dict[str, object]:
    try:
        info = json.loads(text)
    except json.JSONDecodeError:
        return {}
    return info if isinstance(info, dict) else {}


def _describe(info: dict[str, object]) -> str:
    pid, host, since = info.get("pid"), info.get("host"), info.get("since")
    parts = [f"process {pid}" if pid is not None else "a process"]
    if host and host != socket.gethostname():
        parts.append(f"on {host}")
    if isinstance(since, str):
        parts.append(f"since {since}")
    return " ".join(parts)


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def _read(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, 4096).decode("utf-8", "replace")


@contextlib.contextmanager
def hold_run_folder(run_dir: str | Path) -> Iterator[RunLock]:
    """Hold the lock of `run_dir` (an existing folder) for the block; `RunFolderBusyError` if another holds it."""
    path = Path(run_dir) / LOCK_FILE

    def busy(holder: str | None) -> AutoVendError:
        if holder is None:
            return RunFolderBusyError(f"{run_dir} {RELEASED}")
        return RunFolderBusyError(
            f"{run_dir} is being written by {holder} (it holds {LOCK_FILE}); two processes never write one run "
            "folder: wait for that run to end or stop it, then run again (with --resume to continue it)"
        )

    def unwritable(exc: OSError) -> AutoVendError:
        return RunFolderError(f"cannot write the run folder {run_dir}: {exc.strerror or exc}; choose another")

    with _hold(path, busy, unwritable) as lock:
        yield lock


def output_lock_path(target: str | Path) -> Path:
    """The lock file of an output folder: `.NAME.autovend-lock` beside it (the folder itself is replaced whole)."""
    target = Path(target)
    return target.parent / f".{target.name}{OUTPUT_LOCK_SUFFIX}"


@contextlib.contextmanager
def hold_output_folder(target: str | Path, command: str) -> Iterator[RunLock]:
    """Hold the lock of the output folder `target` while `command` checks and writes it; `OutputBusyError` if held.

    The same kernel lock as a run folder's, on `output_lock_path(target)` (its parent folder is made): two
    commands writing one output folder at once (two `world ship -o worlds/x`) would each find it free, then
    replace each other's output; the second now stops at once, naming the first.
    """
    path = output_lock_path(target)

    def busy(holder: str | None) -> AutoVendError:
        if holder is None:
            return OutputBusyError(f"{target} {RELEASED}")
        return OutputBusyError(
            f"{target} is being written by {holder} (it holds {path.name}); two commands never write one output "
            f"folder at once: wait for it to end, then run `{command}` again"
        )

    def unwritable(exc: OSError) -> AutoVendError:
        return OutputWriteError(f"cannot write the output folder {target}: {exc.strerror or exc}; choose another")

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise unwritable(exc) from None
    with _hold(path, busy, unwritable) as lock:
        yield lock


@contextlib.contextmanager
def _hold(
    path: Path, busy: Callable[[str | None], AutoVendError], unwritable: Callable[[OSError], AutoVendError]
) -> Iterator[RunLock]:
    """Hold the kernel lock of the file `path` for the block (see the module docstring).

    `busy(holder)` is raised when another process holds it (`busy(None)`: it was releasing it just then).
    """
    if fcntl is None:  # pragma: no cover - Windows
        yield RunLock(path)
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise unwritable(exc) from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise busy(_describe(_holder(_read(fd)))) from None
        except OSError as exc:  # a file system without locks (some network mounts): go on, as before locks
            log.warning("%s: cannot lock %s (%s); make sure no other process writes it", path.parent, path.name, exc)
            yield RunLock(path)
            return
        if os.fstat(fd).st_ino != _inode(path):  # the file was removed by its holder as we took it: take the new one
            raise busy(None)
        before = _read(fd).strip()
        stale = None
        if before:
            info = _holder(before)
            state = "no longer running" if not _alive(info.get("pid")) else "its lock was free"
            stale = f"{_describe(info)} left {path.name} behind ({state}); the lock was taken over"
        body = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, (json.dumps(body) + "\n").encode("utf-8"))
        try:
            yield RunLock(path, stale)
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # before the lock is released: a waiting process never sees an unlocked, used file
    finally:
        os.close(fd)


def _inode(path: Path) -> int:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return -1

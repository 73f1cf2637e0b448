"""One writer per run folder: an advisory lock that `run_episode` holds while it writes a run folder.

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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from autovend.errors import RunFolderBusyError, RunFolderError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCK_FILE = ".autovend-run.lock"
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
    if fcntl is None:  # pragma: no cover - Windows
        yield RunLock(path)
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise RunFolderError(f"cannot write the run folder {run_dir}: {exc.strerror or exc}; choose another") from exc
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _describe(_holder(_read(fd)))
            raise RunFolderBusyError(
                f"{run_dir} is being written by {holder} (it holds {LOCK_FILE}); two processes never write one run "
                "folder: wait for that run to end or stop it, then run again (with --resume to continue it)"
            ) from None
        except OSError as exc:  # a file system without locks (some network mounts): go on, as before locks
            log.warning("%s: cannot lock %s (%s); make sure no other process writes it", run_dir, LOCK_FILE, exc)
            yield RunLock(path)
            return
        if os.fstat(fd).st_ino != _inode(path):  # the file was removed by its holder as we took it: take the new one
            raise RunFolderBusyError(
                f"{run_dir} was being released by another process as this one started; run the command again"
            )
        before = _read(fd).strip()
        stale = None
        if before:
            info = _holder(before)
            state = "no longer running" if not _alive(info.get("pid")) else "its lock was free"
            stale = f"{_describe(info)} left {LOCK_FILE} behind ({state}); the lock was taken over"
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

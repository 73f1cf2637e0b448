"""`python -m autovend.sweep.child EVENTS_FD PARENT_PID`: one run of a sweep in a process of its own.

Started by `autovend.sweep.process.run_child` on a worker: reads its `RunTask` as JSON on stdin, runs it
(`autovend.sweep.tasks.run_task`, the same code as `autovend run`, resuming from the folder's checkpoint),
and writes its events and then its outcome as JSON lines to the file descriptor EVENTS_FD:

    {"kind": "day", "run": ..., "day": 3, "days": 20, "net_assets": ..., "cost": null}
    {"kind": "outcome", "status": "ran", "resumed_from": 5}
    {"kind": "outcome", "status": "failed", "error": "...", "permanent": true}

SIGTERM stops the run where it is (its last checkpoint stays); so does the death of PARENT_PID (the worker),
checked every `ORPHAN_CHECK_S` seconds. Ctrl-C (SIGINT) is ignored: it is the sweep's client that decides.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
import traceback
from typing import Any, BinaryIO


class RunStopped(BaseException):  # noqa: N818 - not an error: the run was asked to stop
    """Raised in the run by SIGTERM: it unwinds (locks released, files closed) and the process ends."""


def _on_term(signum: int, frame: object) -> None:
    raise RunStopped()


def _watch_parent(parent: int, check_s: float, grace_s: float) -> None:
    """Stop this process once `parent` is gone (it is adopted by another process): SIGTERM, then exit."""
    while os.getppid() == parent:
        time.sleep(check_s)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(grace_s)
    os._exit(143)


class _Pipe:
    """The run's events, one JSON line each, to the task that watches it."""

    def __init__(self, out: BinaryIO, name: str) -> None:
        self.out, self.name = out, name

    def send(self, kind: str, **fields: Any) -> None:
        line = json.dumps({"run": self.name, "kind": kind, "time": time.time(), **fields}, default=str)
        self.out.write(line.encode("utf-8") + b"\n")
        self.out.flush()


def main(argv: list[str]) -> int:
    """Run the task read from stdin; 0 when it wrote its outcome (even a failed one), 143 when stopped."""
    from autovend.sweep.process import GRACE_S, ORPHAN_CHECK_S

    fd, parent = int(argv[0]), int(argv[1])
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = os.fdopen(fd, "wb")
    try:
        signal.signal(signal.SIGTERM, _on_term)
        threading.Thread(target=_watch_parent, args=(parent, ORPHAN_CHECK_S, GRACE_S), daemon=True).start()
        from autovend.sweep.tasks import PERMANENT_ERRORS, run_task, task_from_json

        task = task_from_json(json.loads(sys.stdin.buffer.read()))
        pipe = _Pipe(out, task.name)
        try:
            outcome = run_task(task, pipe)
            message: dict[str, Any] = {"status": outcome.status, "resumed_from": outcome.resumed_from}
        except PERMANENT_ERRORS as exc:
            message = {"status": "failed", "error": str(exc), "permanent": True}
        except Exception as exc:  # a retry may do better (it resumes from the last checkpoint)
            log = traceback.format_exc(limit=-8)
            message = {"status": "failed", "error": f"{type(exc).__name__}: {exc}", "permanent": False, "log": log}
        pipe.send("outcome", **message)
        return 0
    except RunStopped:
        return 143
    finally:
        out.close()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

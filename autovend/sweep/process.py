"""Running one sweep run in a process of its own, watched by its Dask task: time limit, stop, and who died.

    result = run_child(payload, on_event=events, timeout_s=3600, stop_asked=interrupted)

A run (agent code included: a plugin is anyone's code) runs in `python -m autovend.sweep.child`, started in a
session of its own, while the task that started it waits on the worker. So:

- a run over its time limit (`timeout_s`) is stopped (SIGTERM, then SIGKILL after `GRACE_S`) and the task
  says "timed_out"; its folder keeps its last checkpoint, and the next invocation resumes it;
- a run asked to stop (the sweep was interrupted: `stop_asked()` turns true) is stopped the same way;
- a run whose process dies (a plugin calling `os._exit`, a crash, the kernel's OOM killer) takes only its own
  process down: the task knows which run it was and reports its exit code, the worker and the other runs go on;
- a terminal's Ctrl-C reaches the sweep's client only (the run is in another session): the client decides.

The child gets its task as JSON on stdin and writes its events (and at the end its outcome) as JSON lines to
a pipe (`EVENTS_FD`), never to stdout, which the run's own code may print to. It stops itself when its
parent dies (a worker killed): it checks every `ORPHAN_CHECK_S` seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

CHILD_MODULE = "autovend.sweep.child"
GRACE_S = 5.0  # after SIGTERM, seconds before SIGKILL
POLL_S = 0.2  # how often the task looks at its run's process
STOP_CHECK_S = 1.0  # how often the task asks whether the sweep was interrupted
ORPHAN_CHECK_S = 0.5  # how often the run's process looks for its parent
MAX_LINE_BYTES = 1 << 20  # an event line longer than this is dropped

Ending = Literal["outcome", "timed_out", "stopped", "died"]


@dataclass
class ChildResult:
    """How a run's process ended: its last message (`outcome`), stopped by the time limit or a stop, or died."""

    ending: Ending
    message: dict[str, Any] = field(default_factory=dict)  # the child's outcome line (ending "outcome")
    exit_code: int | None = None
    seconds: float = 0.0


def _stop(proc: subprocess.Popen[bytes]) -> int:
    """End the run's process group: SIGTERM (the run unwinds, its checkpoint stays), SIGKILL after GRACE_S."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        return proc.wait(timeout=GRACE_S)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        return proc.wait()


def _lines(buffer: bytearray, chunk: bytes) -> list[dict[str, Any]]:
    """The complete JSON lines of `buffer` + `chunk` (the rest stays in `buffer`); unreadable lines are dropped."""
    buffer += chunk
    out = []
    while (end := buffer.find(b"\n")) >= 0:
        line, buffer[:] = bytes(buffer[:end]), buffer[end + 1 :]
        with contextlib.suppress(ValueError):
            msg = json.loads(line)
            if isinstance(msg, dict):
                out.append(msg)
    return out


def run_child(
    payload: dict[str, Any],
    on_event: Callable[[dict[str, Any]], None],
    timeout_s: float | None = None,
    stop_asked: Callable[[], bool] | None = None,
    module: str = CHILD_MODULE,
) -> ChildResult:
    """Run `python -m autovend.sweep.child` on `payload` and watch it to its end (see the module docstring).

    on_event: called with every event the run sends (start, day, end); its last line (kind "outcome") is
    returned. timeout_s: stop it after this many seconds. stop_asked: polled every `STOP_CHECK_S`; True stops it.
    module: the child's module (another one speaking the same protocol, for tests).
    """
    read_fd, write_fd = os.pipe()
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", module, str(write_fd), str(os.getpid())],
            stdin=subprocess.PIPE,
            pass_fds=(write_fd,),
            start_new_session=True,  # Ctrl-C in a terminal reaches the sweep's client, not the run
        )
    finally:
        os.close(write_fd)
    try:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.write(json.dumps(payload).encode("utf-8"))
            proc.stdin.close()
        return _watch(proc, read_fd, t0, on_event, timeout_s, stop_asked)
    finally:
        os.close(read_fd)
        if proc.poll() is None:  # the task itself is going away (an exception here): never leave the run behind
            _stop(proc)


def _watch(
    proc: subprocess.Popen[bytes],
    read_fd: int,
    t0: float,
    on_event: Callable[[dict[str, Any]], None],
    timeout_s: float | None,
    stop_asked: Callable[[], bool] | None,
) -> ChildResult:
    buffer = bytearray()
    last: dict[str, Any] | None = None
    next_stop_check = t0 + STOP_CHECK_S
    open_pipe = True
    while proc.poll() is None or open_pipe:  # the pipe may close before the process ends (its code may close it)
        if open_pipe:
            ready, _, _ = select.select([read_fd], [], [], POLL_S)
        else:
            ready = []
            time.sleep(POLL_S)
        if ready:
            chunk = os.read(read_fd, 1 << 16)
            open_pipe = bool(chunk)
            for msg in _lines(buffer, chunk):
                if msg.get("kind") == "outcome":
                    last = msg
                else:
                    on_event(msg)
            if len(buffer) > MAX_LINE_BYTES:  # no event is this long: a run writing nonsense to the pipe
                buffer.clear()
        now = time.monotonic()
        if timeout_s is not None and now - t0 > timeout_s:
            return ChildResult("timed_out", exit_code=_stop(proc), seconds=now - t0)
        if stop_asked is not None and now >= next_stop_check:
            next_stop_check = now + STOP_CHECK_S
            if stop_asked():
                return ChildResult("stopped", exit_code=_stop(proc), seconds=now - t0)
    code = proc.wait()
    seconds = time.monotonic() - t0
    if last is not None:
        return ChildResult("outcome", last, code, seconds)
    return ChildResult("died", exit_code=code, seconds=seconds)


def describe_exit(code: int | None) -> str:
    """An exit code in words: `exit code 3`, `killed by SIGKILL`."""
    if code is None:
        return "an unknown exit"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit code {code}"

"""Run checkpoints: the file a run folder keeps while a run is under way, and the writer that makes it after each day.

`checkpoint/checkpoint.pkl` holds the ToolSession (simulator, records, notebook, call counters), the agent's
`state_dict()` (pickled on its own), the completed day and the trajectory's length in bytes (`write_checkpoint`).
It is read back by an allow-list unpickler (`autovend.sim.checkpoint.read_payload`): plain values, numpy arrays
and the simulator's state classes, never code. The agent's state is unpickled only when a run resumes
(`agent_state`), with the classes of the agent's own module allowed as well (a plugin may keep a dataclass of its
file there: the code the user chose to run, and only its classes, never its functions); an agent whose state
holds anything else is stopped at its first checkpoint (`check_plain_state`), not at the resume that could not
read it. `Checkpointer` writes them in a forked child
(`background`), in process (`sync`) or not at all (`off`); see `autovend.runner`.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from autovend.env.boundary import episode_of
from autovend.errors import AgentError, CheckpointError
from autovend.io import load_pickle_bytes, write_pickle
from autovend.sim.checkpoint import read_payload

if TYPE_CHECKING:
    from autovend.agents.base import Agent
    from autovend.session import ToolSession

log = logging.getLogger("autovend.runner")

CHECKPOINT_DIR = "checkpoint"
CHECKPOINT_FILE = "checkpoint.pkl"
CHECKPOINT_FORMAT = "autovend-run-checkpoint"
CHECKPOINT_VERSION = 2  # 2: the agent's state is a pickle of its own, read with the agent's classes allowed

CheckpointMode = Literal["background", "sync", "off"]


def _fork_available() -> bool:
    return hasattr(os, "fork") and hasattr(os, "waitpid")


class Checkpointer:
    """Writes checkpoints of a run, in a forked child (`background`) or in process (`sync`)."""

    def __init__(self, path: Path, mode: CheckpointMode = "background") -> None:
        self.path = path
        self.mode: CheckpointMode = mode if mode != "background" or _fork_available() else "sync"
        self._child: int | None = None
        self._child_day = 0
        self.written = 0
        self.skipped = 0
        self.last_day = 0

    def save(self, day: int, write: Callable[[Path], None]) -> bool:
        """Write the checkpoint of `day` with `write(path)`; False if skipped (a snapshot is still being written)."""
        if self.mode == "off":
            return False
        if self.mode == "sync":
            write(self.path)
            self._done(day)
            return True
        if self._child is not None and not self._reap(block=False):
            self.skipped += 1
            return False
        pid = os.fork()
        if pid == 0:  # the child: write the snapshot, never return into the run
            code = 1
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the run, not a snapshot
                write(self.path)
                code = 0
            except BaseException:  # noqa: BLE001 - the parent only needs the exit status
                code = 1
            finally:
                os._exit(code)
        self._child, self._child_day = pid, day
        return True

    def wait(self) -> None:
        """Wait for a snapshot still being written."""
        if self._child is not None:
            self._reap(block=True)

    def _reap(self, block: bool) -> bool:
        assert self._child is not None
        pid, status = os.waitpid(self._child, 0 if block else os.WNOHANG)
        if pid == 0:
            return False
        code = os.waitstatus_to_exitcode(status)
        if code == 0:
            self._done(self._child_day)
        else:
            log.warning("the checkpoint of day %d could not be written (exit %d)", self._child_day, code)
        self._child = None
        return True

    def _done(self, day: int) -> None:
        self.written += 1
        self.last_day = max(self.last_day, day)


def write_checkpoint(path: Path, session: ToolSession, agent_state: dict[str, Any], meta: dict[str, Any]) -> None:
    """One checkpoint file, replaced atomically: session bytes, agent state and run facts (`meta`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
        session_bytes = episode_of(session).save(Path(tmp) / "session.ckpt").read_bytes()
        payload = {
            "format": CHECKPOINT_FORMAT,
            "version": CHECKPOINT_VERSION,
            **meta,
            "session": session_bytes,
            "agent_state": pickle.dumps(agent_state, protocol=pickle.HIGHEST_PROTOCOL),
        }
    write_pickle(path, payload)


def agent_state(payload: dict[str, Any], agent: Agent, path: Path) -> dict[str, Any]:
    """The agent's state in a checkpoint's payload: plain values, numpy, and classes of the agent's own module."""
    try:
        state = load_pickle_bytes(payload["agent_state"], class_modules=(type(agent).__module__,))
    except (pickle.UnpicklingError, EOFError, TypeError, ValueError, AttributeError, KeyError) as exc:
        raise CheckpointError(
            f"refused to load the agent state in {path}: {exc}; AutoVend never runs code from a file it reads; "
            "start the run again with --force"
        ) from exc
    if not isinstance(state, dict):
        raise CheckpointError(f"the agent state in {path} is not a dict; start the run again with --force")
    return state


def check_plain_state(agent: Agent) -> None:
    """Refuse (AgentError) an agent state that a resume could not read (`agent_state`), at the first checkpoint."""
    try:
        state = agent.state_dict()
        load_pickle_bytes(
            pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL), class_modules=(type(agent).__module__,)
        )
    except pickle.UnpicklingError as exc:
        raise AgentError(
            f"the state_dict of agent {agent.name!r} cannot be checkpointed: {exc}; keep plain values in it (numbers, "
            "strings, lists, dicts, sets, dates, numpy arrays, classes of the agent's own module) and rebuild "
            "other objects in load_state"
        ) from exc


def read_checkpoint(path: Path) -> dict[str, Any]:
    """The payload of a checkpoint file (see `write_checkpoint`)."""
    payload = read_payload(
        path,
        fmt=CHECKPOINT_FORMAT,
        version=CHECKPOINT_VERSION,
        what="run checkpoint",
        remedy="; finish it with the AutoVend that started it, or start the run again with --force",
    )
    return payload

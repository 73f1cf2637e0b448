"""The privilege boundary between an agent and its episode, and the harness's way across it.

What an agent is handed (a `VendingEnv`, a `ToolSession`, their results and observations) holds no
reference to the simulator, the world or the hidden log, in any attribute, private or not: the
object is only a key into this module's table, which maps it to its `Sealed` record (the world and
the current `Episode`). The harness (runner, evaluation, MCP server, tests) gets across with
`episode_of(obj)` / `simulator_of(obj)` / `sealed(obj)`.

Agent code cannot use that way across. The harness runs every piece of an agent's code inside
`agent_code(session)` (`start`, `act_day`, `state_dict`, `load_state`: `autovend.agents.harness`,
`autovend.runner`), and from the first time it does, the session's record belongs to the thread that
drives it. `sealed`, `episode_of` and `simulator_of` then raise `PrivilegeError`

- on any holder, while agent code runs on the calling thread (its own env or session included), and
- on the agent's session, from any other thread (a thread the agent started and polls from);

so does everything of the harness built on them (`RunData.from_session`, `save_run_data`, ...). The one
agent that plans with the hidden demand model, the oracle, is handed the world by the harness by its code
identity (`autovend.agents.identity.grant_hidden`), never through a session. The tools themselves reach the
episode with this module's private accessors (`_record`, `_episode`).

What this guarantees: walking an agent's objects by attribute access (public or underscored
attributes, `__dict__`, `__slots__`, bound methods' `__self__`, closures, containers) never reaches
the simulator, the world, its demand parameters or the hidden log (tests/env/test_boundary.py walks
them), and no public function of AutoVend hands them to agent code. What it does not: Python cannot hide
memory from code running in the same process. An agent that calls this module's private accessors or
edits its table, inspects `gc.get_objects()` or stack frames, patches AutoVend's functions, or simply
loads the world bundle from disk can read the truth. That is cheating a review of the agent's code would
catch, not something it can do by accident; to make it impossible, run the agent in another process and
give it the tools over MCP (`autovend serve`).
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from autovend.errors import PrivilegeError

if TYPE_CHECKING:
    from autovend.env.episode import Episode
    from autovend.sim import Simulator
    from autovend.world.model import World


@dataclass(eq=False)
class Sealed:
    """What an agent-facing object keeps out of its own attributes: its world and current episode.

    driver: the thread that runs the agent's code on it (set by `agent_code`; None until an agent holds it).
    """

    world: World
    episode: Episode | None = None
    driver: int | None = None


# agent-facing object -> its sealed record; an entry goes when its object is garbage collected
_SEALED: weakref.WeakKeyDictionary[object, Sealed] = weakref.WeakKeyDictionary()
_AGENT = threading.local()  # .depth: how many `agent_code` blocks the current thread is inside

REFUSED = (
    "agent code cannot read the hidden state of an episode (the simulator, the world's demand model, the hidden "
    "log): {what} was refused{why}. Act through the tools (session.call); the oracle is the one agent given the "
    "demand model, by the harness (see docs/agents.md, 'The privilege boundary')"
)


def seal(holder: object, record: Sealed) -> None:
    """Keep `record` for `holder` (objects sharing one record see the same episode)."""
    _SEALED[holder] = record


def _record(holder: object) -> Sealed:
    """The sealed record of `holder`, unchecked (the tools' own access); TypeError for an object without one."""
    try:
        return _SEALED[holder]
    except (KeyError, TypeError):
        raise TypeError(
            f"{type(holder).__name__} is not an AutoVend environment or tool session (give a VendingEnv or ToolSession)"
        ) from None


def _episode(holder: object) -> Episode:
    """The episode behind `holder`, unchecked (the tools' own access)."""
    episode = _record(holder).episode
    if episode is None:
        raise RuntimeError("the environment has no episode yet; call reset(seed) first")
    return episode


def in_agent_code() -> bool:
    """True while agent code runs on the calling thread (inside `agent_code`)."""
    return getattr(_AGENT, "depth", 0) > 0


def _checked(holder: object, what: str) -> Sealed:
    record = _record(holder)
    if in_agent_code():
        raise PrivilegeError(REFUSED.format(what=what, why=" while the agent's code runs"))
    if record.driver is not None and record.driver != threading.get_ident():
        raise PrivilegeError(
            REFUSED.format(what=what, why=" from a thread other than the one the harness drives the agent on")
        )
    return record


@contextlib.contextmanager
def agent_code(holder: object) -> Iterator[None]:
    """Run a piece of the agent's code (given `holder`, its session): the accessors refuse inside (module docstring)."""
    record = _record(holder)
    if record.driver is None:
        record.driver = threading.get_ident()
    _AGENT.depth = getattr(_AGENT, "depth", 0) + 1
    try:
        yield
    finally:
        _AGENT.depth -= 1


def sealed(holder: object) -> Sealed:
    """The sealed record of `holder` (harness only); TypeError without one, PrivilegeError in agent code."""
    return _checked(holder, "sealed(...)")


def episode_of(holder: object) -> Episode:
    """The harness's access to the episode behind a `VendingEnv` or `ToolSession` (refused to agent code)."""
    episode = _checked(holder, "episode_of(...)").episode
    if episode is None:
        raise RuntimeError("the environment has no episode yet; call reset(seed) first")
    return episode


def simulator_of(holder: object) -> Simulator:
    """The simulator behind a `VendingEnv` or `ToolSession` (harness only, as `episode_of`)."""
    episode = _checked(holder, "simulator_of(...)").episode
    if episode is None:
        raise RuntimeError("the environment has no episode yet; call reset(seed) first")
    return episode.sim

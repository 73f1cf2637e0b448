"""The privilege boundary between an agent and its episode, and the harness's way across it.

What an agent is handed (a `VendingEnv`, a `ToolSession`, their results and observations) holds no
reference to the simulator, the world or the hidden log, in any attribute, private or not: the
object is only a key into this module's table, which maps it to its `Sealed` record (the world and
the current `Episode`). The harness (runner, evaluation, MCP server, tests) gets across with
`episode_of(obj)` / `simulator_of(obj)`.

What this guarantees: walking an agent's objects by attribute access (public or underscored
attributes, `__dict__`, `__slots__`, bound methods' `__self__`, closures, containers) never reaches
the simulator, the world, its demand parameters or the hidden log (tests/env/test_boundary.py walks
them). What it does not: Python cannot hide memory from code running in the same process. An agent
that imports this module and calls `episode_of`, inspects `gc.get_objects()` or stack frames, or
simply loads the world bundle from disk can read the truth. That is cheating a review of the agent's
code would catch, not something it can do by accident; to make it impossible, run the agent in
another process and give it the tools over MCP (`autovend serve`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autovend.env.episode import Episode
    from autovend.sim import Simulator
    from autovend.world.model import World


@dataclass(eq=False)
class Sealed:
    """What an agent-facing object keeps out of its own attributes: its world and current episode."""

    world: World
    episode: Episode | None = None


# agent-facing object -> its sealed record; an entry goes when its object is garbage collected
_SEALED: weakref.WeakKeyDictionary[object, Sealed] = weakref.WeakKeyDictionary()


def seal(holder: object, record: Sealed) -> None:
    """Keep `record` for `holder` (objects sharing one record see the same episode)."""
    _SEALED[holder] = record


def sealed(holder: object) -> Sealed:
    """The sealed record of `holder`; TypeError for an object that has none."""
    try:
        return _SEALED[holder]
    except (KeyError, TypeError):
        raise TypeError(
            f"{type(holder).__name__} is not an AutoVend environment or tool session (give a VendingEnv or ToolSession)"
        ) from None


def episode_of(holder: object) -> Episode:
    """The harness's access to the episode behind a `VendingEnv` or `ToolSession` (never give it to an agent)."""
    episode = sealed(holder).episode
    if episode is None:
        raise RuntimeError("the environment has no episode yet; call reset(seed) first")
    return episode


def simulator_of(holder: object) -> Simulator:
    """The simulator behind a `VendingEnv` or `ToolSession` (harness only, as `episode_of`)."""
    return episode_of(holder).sim

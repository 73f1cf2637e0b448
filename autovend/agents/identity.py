"""An agent's code identity: its entry point, whether it is privileged, and the one grant of the hidden model.

    entry_point(agent)          # "autovend.agents.oracle:OracleAgent", "/abs/path/my_agent.py:MyAgent", ...
    is_privileged(agent)        # True for the oracle's own class only
    grant_hidden(agent, world)  # the harness hands the oracle the world (its hidden demand model); no-op otherwise

Privilege follows the code, never a name: an agent is privileged when its class *is* the oracle's class
(`autovend.agents.oracle.OracleAgent`, compared by identity), whatever its `name` or a `privileged` attribute
say; a subclass or a plugin named "oracle" is an ordinary agent. The runner records `entry_point(agent)` in
run.json (`agent_entry_point`) and `"privileged": true` only for the oracle, and `autovend verify` checks the
two against each other (`PRIVILEGED_ENTRY_POINTS`). Registered agents (`REGISTERED`) are recorded by their
public entry point; a plugin file by its resolved path and class; any other class by module and qualified name.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autovend.world.model import World

ORACLE_ENTRY_POINT = "autovend.agents.oracle:OracleAgent"
BASELINE_ENTRY_POINT = "autovend.agents.baseline:BaselineAgent"
HOLD_ENTRY_POINT = "autovend.agents.hold:HoldAgent"
PRIVILEGED_ENTRY_POINTS = frozenset({ORACLE_ENTRY_POINT})  # the agents allowed across the boundary
PLUGIN_MODULE_PREFIX = "autovend_plugin_"  # how `autovend.agents.plugins` names the module of a plugin file


def registered() -> dict[type, str]:
    """The classes AutoVend ships, by identity, and the entry point each is recorded as."""
    from autovend.agents.baseline import BaselineAgent
    from autovend.agents.hold import HoldAgent
    from autovend.agents.oracle import OracleAgent

    return {OracleAgent: ORACLE_ENTRY_POINT, BaselineAgent: BASELINE_ENTRY_POINT, HoldAgent: HOLD_ENTRY_POINT}


def entry_point(agent: Any) -> str:
    """Where the agent's class comes from (module docstring); a class that merely names a registered one says so."""
    cls = type(agent)
    known = registered()
    if cls in known:
        return known[cls]
    module = str(getattr(cls, "__module__", "") or "?")
    name = str(getattr(cls, "__qualname__", "") or cls.__name__)
    if module.startswith(PLUGIN_MODULE_PREFIX):
        file = getattr(sys.modules.get(module), "__file__", None)
        if file:
            return f"{Path(file).resolve()}:{name}"
    found = f"{module}:{name}"
    if found in known.values() or found.replace(".agent:", ":") in known.values():
        return f"{found} (another class than AutoVend's own of that name)"
    return found


def is_privileged(agent: Any) -> bool:
    """True only for an instance of the oracle's own class (not a subclass, not an object named "oracle")."""
    return registered_entry_point(agent) in PRIVILEGED_ENTRY_POINTS


def registered_entry_point(agent: Any) -> str | None:
    """The entry point of a registered class (by identity), else None."""
    return registered().get(type(agent))


def grant_hidden(agent: Any, world: World) -> None:
    """Hand the world (with its hidden demand model) to the oracle, by its code identity; nothing for other agents."""
    if is_privileged(agent):
        agent.reveal(world)

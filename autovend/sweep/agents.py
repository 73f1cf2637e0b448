"""The one place a sweep turns an agent entry into an agent, the way `autovend run` builds it.

    agent = build_agent(entry, world_path, seed)   # on a worker, for one run
    check_agent(entry)                              # on the client, before anything is submitted

It takes the registered agents (`baseline`, with an optional config file), `openai:MODEL` (with base
URL, key variable, harness config, price table and MCP) and plugins (`FILE.py:Class`, `module:Class`),
through the loader `autovend run` uses (`autovend.agents.plugins.load_agent`); a plugin file's path is
made absolute before the run is handed to a worker (`autovend.sweep.tasks`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from autovend.sweep.spec import AgentEntry

if TYPE_CHECKING:
    from autovend.agents.base import Agent


def build_agent(entry: AgentEntry, world_path: str | Path, seed: int) -> Agent:
    """The agent of `entry` for a run with `seed` on the bundle at `world_path` (as `autovend run` builds it)."""
    if entry.is_llm:
        from autovend.agents.llm import build_llm_agent
        from autovend.agents.llm.mcp_bridge import serve_command

        return build_llm_agent(
            entry.agent,
            base_url=entry.base_url,
            api_key_env=entry.api_key_env,
            mcp=serve_command(world_path, seed) if entry.mcp else None,
            config_path=entry.config,
            prices_path=entry.prices,
            seed=seed,
            interventions=tuple(entry.interventions),
        )
    from autovend.agents.plugins import load_agent

    return load_agent(entry.agent, seed, entry.config)


def check_agent(entry: AgentEntry) -> None:
    """Raise `ConfigError` for an entry that cannot make an agent: unknown name, unreadable config or prices.

    Makes no network call and reads no API key: those belong to the workers, which may run elsewhere.
    """
    if entry.is_llm:
        from autovend.agents.llm import load_llm_config, parse_spec
        from autovend.agents.llm.pricing import load_price_table

        parse_spec(entry.agent)
        load_llm_config(entry.config, **({"interventions": tuple(entry.interventions)} if entry.interventions else {}))
        load_price_table(entry.prices)
        return
    from autovend.agents.plugins import load_agent

    load_agent(entry.agent, 0, entry.config)

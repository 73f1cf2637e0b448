"""The LLM agent harness: a chat model with tool calling runs the network through the 18 tools.

`build_llm_agent("openai:MODEL", base_url=..., api_key_env=..., mcp=...)` builds an agent for the
runner (`autovend run --agent openai:MODEL`); see `docs/llm-agents.md`.

The names below load on first use, so the modules that need no model client (`replay`,
`transcript`, `pricing`: `autovend replay` of any run) work without the `[llm]` extra (openai).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autovend.agents.llm.agent import LLMAgent, parse_spec
    from autovend.agents.llm.config import LLMConfig, load_llm_config
    from autovend.agents.llm.factory import build_llm_agent

__all__ = ["LLMAgent", "LLMConfig", "build_llm_agent", "load_llm_config", "parse_spec"]
_HOME = {
    "LLMAgent": "autovend.agents.llm.agent",
    "build_llm_agent": "autovend.agents.llm.factory",
    "parse_spec": "autovend.agents.llm.agent",
    "LLMConfig": "autovend.agents.llm.config",
    "load_llm_config": "autovend.agents.llm.config",
}


def __getattr__(name: str) -> Any:
    """The public names, imported from their modules when first asked for (PEP 562)."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)

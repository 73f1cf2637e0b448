"""The LLM agent harness: a chat model with tool calling runs the network through the 18 tools.

`build_llm_agent("openai:MODEL", base_url=..., api_key_env=..., mcp=...)` builds an agent for the
runner (`autovend run --agent openai:MODEL`); see `docs/llm-agents.md`.
"""

from autovend.agents.llm.agent import LLMAgent, build_llm_agent, parse_spec
from autovend.agents.llm.config import LLMConfig, load_llm_config

__all__ = ["LLMAgent", "LLMConfig", "build_llm_agent", "load_llm_config", "parse_spec"]

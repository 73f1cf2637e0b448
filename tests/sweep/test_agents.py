"""The sweep's one agent builder: the agents `autovend run` builds, and checks that need no key and no network."""

from __future__ import annotations

from pathlib import Path

import pytest

from autovend.agents.baseline import BaselineAgent, load_baseline_config
from autovend.agents.llm import LLMAgent
from autovend.agents.plugins import load_agent
from autovend.errors import ConfigError
from autovend.shipped import SWEEP_SPECS
from autovend.sweep.agents import build_agent, check_agent
from autovend.sweep.spec import AgentEntry, SweepSpec, load_spec
from autovend.sweep.tasks import WorldFacts, plan


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
        pytest.param(AgentEntry(agent="no-such-agent"), "there is no agent 'no-such-agent'", id="unknown"),
        pytest.param(AgentEntry(agent="openai:"), "an LLM agent is given as openai:MODEL", id="no-model"),
        pytest.param(
            AgentEntry(agent="baseline", config="missing.yaml"),
            r"there is no agent config 'missing.yaml': no such file here and no shipped agent config of that name",
            id="cfg",
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
    """Without OPENAI_API_KEY an LLM entry still checks (the key belongs to the workers) and no client is made."""
    import autovend.agents.llm.client as client

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    made = []
    monkeypatch.setattr(client, "OpenAIClient", lambda *a, **k: made.append(a) or None, raising=False)
    assert check_agent(AgentEntry(agent="openai:gpt-4.1-mini")) is None
    assert made == [] and "OPENAI_API_KEY" not in __import__("os").environ
    with pytest.raises(ConfigError):  # while a bad spec of the same kind is refused by the same check
        check_agent(AgentEntry(agent="openai:"))


def test_a_plugin_file_is_loaded_as_autovend_run_loads_it(tmp_path, monkeypatch):
    repo = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(repo)  # the spec's relative path, as a user gives it from the checkout
    entry = AgentEntry(agent="examples/agents/hold.py:HoldAgent")
    check_agent(entry)
    agent = build_agent(entry, tmp_path, seed=1)
    assert type(agent).__name__ == "HoldAgent" and agent.name == load_agent(entry.agent, 1).name


def test_a_plugin_file_reaches_the_workers_with_its_absolute_path(tmp_path, monkeypatch):
    repo = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(repo)
    spec = SweepSpec(worlds=["worlds/cn20"], agents=["examples/agents/hold.py:HoldAgent", "baseline"], seeds=[1])
    facts = {"cn20": WorldFacts(str(repo / "worlds" / "cn20"), "a" * 64, 180)}
    agents = sorted(t.agent.agent for t in plan(spec, tmp_path, facts))
    assert agents == [f"{repo / 'examples' / 'agents' / 'hold.py'}:HoldAgent", "baseline"]
    monkeypatch.chdir(tmp_path)  # a worker elsewhere still finds the file
    assert type(build_agent(AgentEntry(agent=agents[0]), tmp_path, seed=1)).__name__ == "HoldAgent"


def test_the_shipped_baselines_sweep_is_a_valid_spec(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # its world, configs and agents are shipped names: no checkout needed
    spec = load_spec(SWEEP_SPECS.folder / "baselines-cn20.yaml")
    assert [a.label for a in spec.agents] == ["baseline", "baseline-paper", "baseline-pinned", "hold", "oracle"]
    for entry in spec.agents:
        check_agent(entry)

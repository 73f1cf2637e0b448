"""The agent protocol and registry."""

from __future__ import annotations

import pytest

from autovend.agents.base import AGENTS, Agent, make_agent
from autovend.errors import ConfigError


def test_registry_builds_the_baseline_with_its_config(tmp_path):
    (tmp_path / "b.yaml").write_text("n_skus: 30\n")
    agent = make_agent("baseline", seed=5, config_path=tmp_path / "b.yaml")
    assert isinstance(agent, Agent)
    assert agent.name == "baseline"
    assert agent.config.n_skus == 30  # type: ignore[attr-defined]
    assert "baseline" in AGENTS


def test_unknown_agent_names_the_known_ones():
    with pytest.raises(ConfigError, match="the agents are: .*baseline"):
        make_agent("no-such-agent", seed=1)


def test_protocol_is_structural():
    class Minimal:
        name = "minimal"

        def start(self, session):
            pass

        def act_day(self, session):
            session.call("end_day", {})

        def state_dict(self):
            return {}

        def load_state(self, state):
            pass

    assert isinstance(Minimal(), Agent)
    assert not isinstance(object(), Agent)

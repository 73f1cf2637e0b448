"""load_agent: registered names, openai:MODEL, FILE.py:Class and package.module:Class plugins, and their errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autovend.agents.baseline import BaselineAgent
from autovend.agents.plugins import LLMOptions, load_agent
from autovend.errors import ConfigError, LLMError

ROOT = Path(__file__).resolve().parents[2]
HOLD = ROOT / "examples" / "agents" / "hold.py"

CONFIGURABLE = """
from pathlib import Path


class Configured:
    name = "configured"

    def __init__(self, seed: int, config_path: Path | None = None) -> None:
        self.seed, self.config_path = seed, config_path

    def start(self, session): pass
    def act_day(self, session): session.call("end_day", {})
    def state_dict(self): return {}
    def load_state(self, state): pass


def make(**kwargs):
    return Configured(**kwargs)


class NoName:
    def start(self, session): pass
    def act_day(self, session): pass


class Broken:
    def __init__(self) -> None:
        raise RuntimeError("no database at /nowhere")
"""


@pytest.fixture
def plugin(tmp_path) -> Path:
    path = tmp_path / "my_agents.py"
    path.write_text(CONFIGURABLE)
    return path


def test_the_example_file_plugin(tmp_path):
    agent = load_agent(f"{HOLD}:HoldAgent", seed=3)
    assert agent.name == "hold" and agent.seed == 3  # type: ignore[attr-defined]
    again = load_agent(f"{HOLD}:HoldAgent", seed=4)
    assert type(again) is type(agent)  # the file is loaded once per process
    module = sys.modules[type(agent).__module__]
    assert module.__name__.startswith("autovend_plugin_hold_") and Path(module.__file__) == HOLD.resolve()


def test_a_module_plugin_and_the_registered_names():
    agent = load_agent("autovend.agents.baseline.agent:BaselineAgent", seed=5)
    assert isinstance(agent, BaselineAgent) and agent.seed == 5
    registered = load_agent("baseline", seed=6)
    assert isinstance(registered, BaselineAgent) and registered.seed == 6


def test_openai_models_get_the_llm_options(tmp_path, monkeypatch):
    monkeypatch.delenv("AUTOVEND_TEST_NO_KEY", raising=False)
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  fake: {input: 1.0, output: 2.0}\n")
    opts = LLMOptions(base_url="http://127.0.0.1:9/v1", api_key_env="AUTOVEND_TEST_NO_KEY", prices_path=prices)
    agent = load_agent("openai:fake", seed=7, llm=opts)  # a base URL needs no key; nothing is sent yet
    assert agent.name == "openai:fake"
    # the options really reach the harness: no base URL and no key, or a bad price table, are refused
    with pytest.raises(LLMError, match="AUTOVEND_TEST_NO_KEY"):
        load_agent("openai:fake", seed=7, llm=LLMOptions(api_key_env="AUTOVEND_TEST_NO_KEY", prices_path=prices))
    prices.write_text("models:\n  fake: {per_token: 1.0}\n")
    with pytest.raises(ConfigError, match="prices.yaml: models.fake needs input and output"):
        load_agent("openai:fake", seed=7, llm=opts)


def test_seed_and_config_path_are_passed_when_declared(plugin, tmp_path):
    cfg = tmp_path / "cfg.yaml"
    agent = load_agent(f"{plugin}:Configured", seed=8, config_path=cfg)
    assert (agent.seed, agent.config_path) == (8, cfg)  # type: ignore[attr-defined]
    made = load_agent(f"{plugin}:make", seed=9, config_path=cfg)  # a factory function taking **kwargs
    assert (made.seed, made.config_path) == (9, cfg)  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match="takes no config_path parameter, so --agent-config"):
        load_agent(f"{HOLD}:HoldAgent", seed=1, config_path=cfg)
    with pytest.raises(ConfigError, match="there is no agent 'no-such-agent'; give baseline, oracle"):
        load_agent("no-such-agent", seed=1)


@pytest.mark.parametrize(
    ("attr", "message"),
    [
        pytest.param(
            "Missing", r"'Missing' is not defined there \(its classes: Broken, Configured, NoName\)", id="no-class"
        ),
        pytest.param("NoName", "NoName is not an agent, it lacks name .*, state_dict, load_state", id="not-an-agent"),
        pytest.param("Broken", "creating the agent failed: RuntimeError: no database at /nowhere", id="init-raises"),
    ],
)
def test_plugin_errors_name_the_spec_and_the_fix(plugin, attr, message):
    with pytest.raises(ConfigError, match=message) as err:
        load_agent(f"{plugin}:{attr}", seed=1)
    assert str(plugin) in str(err.value)


def test_missing_files_modules_and_failing_imports(tmp_path):
    with pytest.raises(ConfigError, match="there is no file .*nope.py"):
        load_agent(f"{tmp_path / 'nope.py'}:Agent", seed=1)
    with pytest.raises(ConfigError, match="cannot import module 'no_such_pkg.agents'"):
        load_agent("no_such_pkg.agents:Agent", seed=1)
    bad = tmp_path / "bad.py"
    bad.write_text("import no_such_dependency\n")
    with pytest.raises(ConfigError, match="running .*bad.py failed: ModuleNotFoundError"):
        load_agent(f"{bad}:Agent", seed=1)
    assert not any(name.startswith("autovend_plugin_bad_") for name in sys.modules)  # a failed load leaves nothing


def test_docs_show_the_example_verbatim_and_it_stays_small():
    source = HOLD.read_text(encoding="utf-8")
    assert len(source.splitlines()) < 40
    assert f"```python\n{source}```" in (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")


def test_the_shipped_hold_agent_is_the_example_line_for_line(tmp_path, monkeypatch):
    from autovend.agents import hold

    example = HOLD.read_text(encoding="utf-8")
    shipped = Path(hold.__file__).read_text(encoding="utf-8")
    assert shipped[shipped.index("class HoldAgent") :] == example[example.index("class HoldAgent") :]
    monkeypatch.chdir(tmp_path)  # a module plugin: no checkout needed
    agent = load_agent("autovend.agents.hold:HoldAgent", seed=2)
    assert agent.name == "hold" and type(agent).__module__ == "autovend.agents.hold"

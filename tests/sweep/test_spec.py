"""The sweep spec: strings or mappings for worlds and agents, labels, providers, and clear errors for bad specs."""

from __future__ import annotations

from pathlib import Path

import pytest

from autovend.errors import ConfigError
from autovend.sweep.spec import AgentEntry, load_spec, parse_spec


def test_strings_and_mappings_make_the_same_entries():
    spec = parse_spec(
        {
            "worlds": ["worlds/cn20", {"path": "other/cn20", "name": "cn20-b"}],
            "agents": ["baseline", {"agent": "baseline", "config": "params/alt.yaml"}, "openai:qwen2.5:7b"],
            "seeds": [1, 2, 3],
            "days": 20,
        }
    )
    assert [w.label for w in spec.worlds] == ["cn20", "cn20-b"]
    assert [a.label for a in spec.agents] == ["baseline", "baseline-alt", "openai-qwen2.5-7b"]
    assert spec.days == 20 and spec.n_runs == 2 * 3 * 3
    assert spec.agents[0] == AgentEntry(agent="baseline")


def test_provider_of_an_llm_agent():
    assert AgentEntry(agent="openai:gpt-4.1-mini").provider_key == "openai"
    assert AgentEntry(agent="openai:m", base_url="http://127.0.0.1:11434/v1").provider_key == "127.0.0.1:11434"
    assert AgentEntry(agent="openai:m", provider="lab-vllm").provider_key == "lab-vllm"
    assert AgentEntry(agent="baseline").provider_key is None


def test_load_spec_reads_yaml(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text("worlds: [worlds/cn20]\nagents: [baseline]\nseeds: [1, 2]\n")
    spec = load_spec(path)
    assert spec.worlds[0].path == Path("worlds/cn20") and spec.seeds == [1, 2] and spec.days is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(
            {"worlds": ["w"], "agents": ["baseline"], "seeds": [1], "dayz": 3},
            "key dayz: is no setting here; remove it or correct its spelling (the keys are: worlds, agents, seeds, "
            "days, limits, timeout_s, scenarios, draws)",
            id="unknown-key",
        ),
        pytest.param({"worlds": ["w"], "agents": ["baseline"]}, "key seeds: is missing; add it", id="no-seeds"),
        pytest.param(
            {"worlds": ["w"], "agents": ["baseline"], "seeds": [1, -2]},
            "key seeds, entry 2: seed must be a whole number >= 0, got -2; pass 0 or more",
            id="negative-seed",
        ),
        # a boolean seed would run seed 1 (pydantic's lax int takes true as 1), a float seed its whole part
        pytest.param(
            {"worlds": ["w"], "agents": ["baseline"], "seeds": [2, True]},
            "key seeds, entry 2: seed must be a whole number >= 0, got True (a boolean); pass an integer such as 1",
            id="boolean-seed",
        ),
        pytest.param(
            {"worlds": ["w"], "agents": ["baseline"], "seeds": [1.0]},
            "key seeds, entry 1: seed must be a whole number >= 0, got 1.0 (a float)",
            id="float-seed",
        ),
        pytest.param(
            {"worlds": ["w"], "agents": ["baseline"], "seeds": [1], "days": True},
            "key days: Input should be a valid integer (got True); change the value",
            id="boolean-days",
        ),
        pytest.param(
            {"worlds": ["w"], "agents": ["baseline"], "seeds": [1], "limits": {"openai": True}},
            "key limits, key openai: Input should be a valid integer (got True)",
            id="boolean-limit",
        ),
        pytest.param(
            {"worlds": ["w"], "agents": [{"agent": "baseline", "checkpoint_every": True}], "seeds": [1]},
            "key agents, entry 1, key checkpoint_every: Input should be a valid integer (got True)",
            id="boolean-checkpoint-every",
        ),
        pytest.param(
            {"worlds": ["w"], "agents": ["baseline"], "seeds": [1], "timeout_s": True},
            "key timeout_s: Input should be a valid number (got True)",
            id="boolean-timeout",
        ),
        pytest.param(
            {"worlds": ["w"], "agents": ["baseline"], "seeds": [1], "timeout_s": 0},
            "key timeout_s: Input should be greater than 0 (got 0)",
            id="zero-timeout",
        ),
        pytest.param(
            {"worlds": ["w"], "agents": ["baseline"], "seeds": [1, 1]},
            "seeds: seed 1 is listed twice",
            id="seed-twice",
        ),
        pytest.param(
            {"worlds": ["a/cn20", "b/cn20"], "agents": ["baseline"], "seeds": [1]},
            "worlds, entries 1 and 2 have the same label 'cn20'; give one of them another `name`",
            id="same-world-label",
        ),
        pytest.param(
            {"worlds": ["w"], "agents": [{"agent": "baseline", "name": "../up"}], "seeds": [1]},
            "agents, entry 1: name '../up' is not usable in a folder name",
            id="bad-name",
        ),
        pytest.param(
            {"worlds": ["w"], "agents": [{"agent": "baseline", "base_url": "http://x/v1"}], "seeds": [1]},
            "agents, entry 1 (baseline): options of openai:MODEL agents only (base_url); remove them",
            id="llm-option-on-baseline",
        ),
        pytest.param(
            {"worlds": ["w"], "agents": ["openai:m"], "seeds": [1], "limits": {"opnai": 2}},
            "limits: no agent has provider 'opnai'; the providers are: openai",
            id="limit-of-unknown-provider",
        ),
        pytest.param(
            {"worlds": ["w"], "agents": ["baseline"], "seeds": [1], "days": 0},
            "key days: Input should be greater than 0",
            id="zero-days",
        ),
    ],
)
def test_bad_specs_are_refused_with_the_entry_and_the_fix(data, message):
    with pytest.raises(ConfigError) as err:
        parse_spec(data, "sweep.yaml")
    assert str(err.value).startswith("sweep.yaml: ")
    assert message in str(err.value)


def test_yaml_errors_name_the_line(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text("worlds: [worlds/cn20]\nagents: [baseline\nseeds: [1]\n")
    with pytest.raises(ConfigError, match=r"sweep.yaml: not valid YAML at line \d+, column \d+"):
        load_spec(path)


def test_a_spec_that_is_not_a_mapping(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text("- worlds/cn20\n")
    with pytest.raises(ConfigError, match="a sweep spec is a mapping with worlds, agents, seeds"):
        load_spec(path)


def test_a_missing_spec_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read the sweep spec .*nope.yaml"):
        load_spec(tmp_path / "nope.yaml")


def test_days_between_checkpoints():
    assert AgentEntry(agent="baseline").checkpoint_days == 5  # a checkpoint costs about a baseline day's CPU
    assert AgentEntry(agent="openai:m").checkpoint_days == 1  # an LLM day costs API calls: lose none
    assert AgentEntry(agent="openai:m", checkpoint_every=3).checkpoint_days == 3


@pytest.mark.parametrize(
    ("agent", "label"),
    [
        ("examples/agents/hold.py:HoldAgent", "hold-HoldAgent"),
        ("/abs/where/hold.py:HoldAgent", "hold-HoldAgent"),  # the same file from another folder: the same label
        ("..\\agents\\hold.py:HoldAgent", "hold-HoldAgent"),
        ("mypkg.agents:Mine", "mypkg.agents-Mine"),
        ("openai:qwen2.5:7b", "openai-qwen2.5-7b"),
        ("baseline", "baseline"),
    ],
)
def test_an_agent_without_a_name_gets_a_label_from_its_string(agent, label):
    assert AgentEntry(agent=agent).label == label
    assert AgentEntry(agent=agent, config=Path("cfg/alt.yaml")).label == f"{label}-alt"

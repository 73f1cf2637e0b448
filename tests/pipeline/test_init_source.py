"""`autovend init-source NAME` and the one pipeline template.

The shipped dvc.yaml and pipelines/*/dvc.yaml are the template's renderings, byte for byte; init-source writes a
new source's pipeline from the same template and a params file with every key of check, calibrate, validate and
export at its default with its comment (reading back as the defaults); docs/operators.md documents every key.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from autovend.cli import app
from autovend.errors import ConfigError
from autovend.pipeline.keys import KEY_DOCS, SOURCE_SECTIONS
from autovend.pipeline.newsource import init_source, render_params
from autovend.pipeline.sections import SECTIONS
from autovend.pipeline.template import SHIPPED, new_source_spec, render_pipeline

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("path", sorted(SHIPPED), ids=str)
def test_the_shipped_pipelines_are_the_templates_renderings(path: str) -> None:
    assert (ROOT / path).read_text(encoding="utf-8") == render_pipeline(SHIPPED[path])


def test_every_shipped_pipeline_comes_from_the_template() -> None:
    files = {"dvc.yaml", *(str(p.relative_to(ROOT)) for p in (ROOT / "pipelines").glob("*/dvc.yaml"))}
    assert files == set(SHIPPED)


def test_init_source_writes_the_params_file_and_the_pipeline(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["init-source", "kyiv-coffee", "--world", "coffee1"])
    assert res.exit_code == 0, res.output
    assert "wrote params/kyiv-coffee.yaml" in res.output and "wrote pipelines/kyiv-coffee/dvc.yaml" in res.output
    pipeline = (tmp_path / "pipelines" / "kyiv-coffee" / "dvc.yaml").read_text()
    assert pipeline == render_pipeline(new_source_spec("kyiv-coffee", "coffee1"))
    stages = yaml.safe_load(pipeline)["stages"]
    assert list(stages) == ["check", "calibrate", "validate", "export_world", "baseline", "oracle", "ship"]
    assert stages["ship"]["outs"] == [{"worlds/coffee1": {"cache": False}}]
    text = (tmp_path / "params" / "kyiv-coffee.yaml").read_text()
    params = yaml.safe_load(text)
    assert list(params) == list(SOURCE_SECTIONS)
    for section in SOURCE_SECTIONS:
        model = SECTIONS[section]
        assert list(params[section]) == list(model.model_fields)  # every key, in the model's order
        expected = model() if section != "export" else model(climate="source")
        assert model.model_validate(params[section]) == expected
        for key, doc in KEY_DOCS[section].items():
            assert f"  # {doc}\n  {key}:" in text
    again = CliRunner().invoke(app, ["init-source", "kyiv-coffee"])
    assert again.exit_code != 0 and "exist already" in str(again.exception)
    assert CliRunner().invoke(app, ["init-source", "kyiv-coffee", "--force"]).exit_code == 0


@pytest.mark.parametrize(("name", "world"), [("Kyiv Coffee", None), ("kyiv", "../up")])
def test_bad_names_are_refused(tmp_path: Path, name: str, world: str | None) -> None:
    with pytest.raises(ConfigError, match="cannot name a"):
        init_source(name, world, root=tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_every_key_is_documented_in_operators_md() -> None:
    doc = (ROOT / "docs" / "operators.md").read_text(encoding="utf-8")
    for section in SOURCE_SECTIONS:
        assert set(KEY_DOCS[section]) == set(SECTIONS[section].model_fields), section
        for key, line in KEY_DOCS[section].items():
            assert f"| `{section}.{key}` |" in doc and line in doc, f"{section}.{key}"


def test_a_new_repository_gets_the_benchmark_settings(tmp_path: Path) -> None:
    from autovend.demand.settings import DemandSettings, load_demand_settings
    from autovend.export.params import load_economics
    from autovend.world.model import Economics

    init_source("kyiv-coffee", root=tmp_path)
    bench = tmp_path / "params" / "benchmark.yaml"
    assert load_demand_settings(bench) == DemandSettings() == load_demand_settings(ROOT / "params" / "benchmark.yaml")
    assert load_economics(bench) == Economics() == load_economics(ROOT / "params" / "benchmark.yaml")
    bench.write_text("# mine\n")
    init_source("other", root=tmp_path)
    assert bench.read_text() == "# mine\n"  # an existing one is the operator's: kept


def test_the_rendered_params_name_the_climate_given() -> None:
    assert "  climate: NewYork\n" in render_params("nj-two", climate="NewYork")

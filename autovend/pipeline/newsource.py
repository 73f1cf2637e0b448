"""`autovend init-source NAME`: a new source's params file and pipeline, from the shipped ones' template.

    init_source("kyiv-coffee", world="coffee1", root=Path("."))
    # -> params/kyiv-coffee.yaml, pipelines/kyiv-coffee/dvc.yaml

The params file holds every section a source's pipeline reads (check, calibrate, validate, export) with every key
at its default and a comment saying what it does (`autovend.pipeline.keys`), so `dvc exp run -S` can change any of
them; the pipeline is `autovend.pipeline.template.render_pipeline` of a source folder at data/raw/NAME. Nothing
that exists is replaced unless `force`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from autovend.errors import ConfigError
from autovend.io import atomic_write_text
from autovend.pipeline.keys import KEY_DOCS, SOURCE_SECTIONS
from autovend.pipeline.sections import SECTIONS
from autovend.pipeline.template import new_source_spec, render_pipeline

SOURCE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")  # source.yaml's name rule (docs/data-contract.md)
WORLD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")  # `autovend world install`'s name rule


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return {k: _plain(getattr(value, k)) for k in type(value).model_fields}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def render_params(source: str, climate: str = "source") -> str:
    """params/SOURCE.yaml: every key of check, calibrate, validate and export at its default, each with its line."""
    lines = [
        f"# Pipeline settings of the source {source}, one section per DVC stage (pipelines/{source}/dvc.yaml).",
        "# Every key is written out at its default so `dvc exp run -S` can change it; docs/operators.md explains each.",
        "# export.climate must fit the source's country: a copied params file with another country's climate is",
        "# refused at export.",
    ]
    for section in SOURCE_SECTIONS:
        model, docs = SECTIONS[section], KEY_DOCS[section]
        default = model()
        lines.append(f"{section}:")
        for key in model.model_fields:
            value = climate if (section, key) == ("export", "climate") else _plain(getattr(default, key))
            lines.append(f"  # {docs[key]}")
            dumped = yaml.safe_dump(
                {key: value}, sort_keys=False, default_flow_style=False, allow_unicode=True, width=100
            )
            lines += ["  " + line for line in dumped.rstrip("\n").splitlines()]
    return "\n".join(lines) + "\n"


BENCHMARK_HEADER = """\
# Benchmark settings: fixed by design, not estimated (paper §3.2-3.3), the same for every source: the demand
# model's settings and the operating rules (in CNY; a world converts them to its source's currency). Written by
# `autovend init-source` with AutoVend's defaults, the repository's params/benchmark.yaml.
"""


def render_benchmark() -> str:
    """params/benchmark.yaml with AutoVend's defaults (demand, economics)."""
    body = {name: _plain(SECTIONS[name]()) for name in ("demand", "economics")}
    return BENCHMARK_HEADER + yaml.safe_dump(body, sort_keys=False, default_flow_style=False, allow_unicode=True)


def init_source(
    source: str, world: str | None = None, *, root: Path, climate: str = "source", force: bool = False
) -> tuple[Path, Path]:
    """Write params/SOURCE.yaml and pipelines/SOURCE/dvc.yaml under `root`; return their paths.

    params/benchmark.yaml, which every pipeline reads, is written with the defaults when `root` has none.
    """
    if not SOURCE_NAME.fullmatch(source):
        raise ConfigError(
            f"{source!r} cannot name a source: use lower-case letters, digits and '-' (as source.yaml's name), "
            "e.g. kyiv-coffee"
        )
    world = world or source
    if not WORLD_NAME.fullmatch(world):
        raise ConfigError(f"{world!r} cannot name a world: use letters, digits, '.', '_' or '-' (--world)")
    params, pipeline = root / "params" / f"{source}.yaml", root / "pipelines" / source / "dvc.yaml"
    there = [str(p) for p in (params, pipeline) if p.exists()]
    if there and not force:
        raise ConfigError(f"{' and '.join(there)} exist already; choose another name, or pass --force to replace them")
    text = render_params(source, climate)
    loaded = yaml.safe_load(text)
    for section in SOURCE_SECTIONS:  # the written file reads back as the settings it says
        SECTIONS[section].model_validate(loaded[section])
    atomic_write_text(params, text)
    atomic_write_text(pipeline, render_pipeline(new_source_spec(source, world)))
    if not (root / "params" / "benchmark.yaml").exists():
        atomic_write_text(root / "params" / "benchmark.yaml", render_benchmark())
    return params, pipeline

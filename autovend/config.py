"""Reading a section of a params YAML file into a pydantic settings model (one place for all stages)."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from autovend.errors import ConfigError

M = TypeVar("M", bound=BaseModel)


def read_yaml(path: str | Path) -> dict:
    """The mapping in a YAML file; ConfigError naming the file if it cannot be read or is not a mapping."""
    import yaml  # only when a params file is read (not on the way to playing a world)

    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read params file {path}: {exc}") from exc
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"params file {path} must hold a mapping of section names to settings")
    return raw


def load_section(model: type[M], path: str | Path | None, section: str) -> M:
    """Validate section `section` of the YAML file at `path` as `model`.

    The model's defaults when `path` is None or the section is missing; a ConfigError naming the file,
    the section and the bad keys when it does not validate.
    """
    if path is None:
        return model()
    raw = read_yaml(path).get(section) or {}
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}: invalid `{section}` settings:\n{exc}") from exc

"""Reading params files: one YAML per source under params/, keyed by stage, plus params/benchmark.yaml."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from autovend.errors import ConfigError


def read_params(path: str | Path | None) -> dict[str, Any]:
    """The parsed YAML mapping of a params file ({} for None)."""
    if path is None:
        return {}
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(f"cannot read params file {path}: {exc}") from exc
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"params file {path} must hold a mapping of stage names to settings")
    return raw

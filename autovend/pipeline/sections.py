"""The sections of a params file (params/<source>.yaml, params/benchmark.yaml) and the settings model of each.

Every setting a stage reads lives in its section, and every section of a shipped params file holds every field of
its model, defaults included: DVC's `dvc exp run -S params/synthetic-cn.yaml:validate.bootstrap=500` changes a key
only if the file has it (`missing_keys` finds those it lacks; tests/pipeline/test_params_files.py holds the shipped
files to it). docs/operators.md documents every key.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from autovend.calibration.config import CalibrationConfig
from autovend.data.plausibility import CheckSettings
from autovend.data.synth.config import SynthConfig
from autovend.demand.settings import DemandSettings
from autovend.export.params import ExportParams
from autovend.pipeline.cluster import ClusterConfig
from autovend.validation.config import ValidationConfig
from autovend.world.model import Economics

# section -> the model that reads it (a source's params file: synthesize (synthetic sources), check, calibrate,
# validate, export, cluster (where calibrate and validate compute; no stage's dependency); params/benchmark.yaml:
# demand, economics)
SECTIONS: dict[str, type[BaseModel]] = {
    "synthesize": SynthConfig,
    "check": CheckSettings,
    "calibrate": CalibrationConfig,
    "validate": ValidationConfig,
    "export": ExportParams,
    "cluster": ClusterConfig,
    "demand": DemandSettings,
    "economics": Economics,
}


def missing_keys(model: type[BaseModel], raw: dict[str, Any], prefix: str = "") -> list[str]:
    """The fields of `model` (nested models' fields too, dotted) that the mapping `raw` does not give."""
    out = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        if name not in raw:
            out.append(key)
            continue
        inner = field.annotation
        if isinstance(inner, type) and issubclass(inner, BaseModel) and isinstance(raw[name], dict):
            out += missing_keys(inner, raw[name], key + ".")
    return out

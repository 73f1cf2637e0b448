"""`make status`: what `dvc status` lists, pipeline by pipeline, and why (`python -m autovend.pipeline.status`).

`dvc status` compares every stage of every pipeline (dvc.yaml and pipelines/*/dvc.yaml) with its lock.
A checkout holds the pipelines' shipped results (worlds/, reports/) but not their intermediate outputs
under data/, which are not committed and have no DVC remote to come from; so every stage of a pipeline
not yet run on this machine is listed, its outputs "not in cache" and its inputs from other stages
"deleted". That is nothing to fix. This report tells it apart from what is:

- **not built here**: the stage's outputs (and its inputs made by other stages) are not on this machine;
  the pipeline's make target builds them.
- **needs an input**: an input that no stage makes is not here (the NJ pipeline's CSV: docs/real-data.md).
- **changed since the lock**: code, params or the command changed after the lock was written; the stage
  would run again (and the lock record the new dependencies).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

PIPELINES = {  # pipeline file -> the make target that runs it
    "dvc.yaml": "make repro",
    "pipelines/synthetic-cn99/dvc.yaml": "make worlds",
    "pipelines/nj-vending/dvc.yaml": "make real-data",
}
ABSENT = ("deleted", "not in cache")


@dataclass
class StageState:
    """Why one stage is listed by `dvc status`."""

    stage: str
    not_built: bool = False  # outputs absent, or inputs absent that other stages make
    missing_inputs: list[str] = field(default_factory=list)  # absent inputs that no stage makes
    changed: list[str] = field(default_factory=list)  # dependencies changed since the lock (code, params, command)


def stage_outputs(pipeline: Path, root: Path) -> set[str]:
    """The output paths of a pipeline's stages, relative to the repository root (each stage's wdir applied)."""
    stages = (yaml.safe_load(pipeline.read_text(encoding="utf-8")) or {}).get("stages", {})
    out: set[str] = set()
    for spec in stages.values():
        wdir = (pipeline.parent / spec.get("wdir", ".")).resolve()
        for kind in ("outs", "metrics", "plots"):
            for entry in spec.get(kind, []) or []:
                name = next(iter(entry)) if isinstance(entry, dict) else str(entry)
                out.add((wdir / name).resolve().relative_to(root.resolve()).as_posix())
    return out


def explain(status: Mapping[str, Any], made: set[str]) -> list[StageState]:
    """The stages of one `dvc status --json` answer with why each is listed; `made`: every stage's outputs."""
    states = []
    for stage, changes in status.items():
        state = StageState(stage.split(":")[-1])
        for change in changes:
            if isinstance(change, str):  # "changed command", "always changed"
                state.changed.append(change.removeprefix("changed "))
                continue
            for group, entries in change.items():
                for path, how in (entries or {}).items():
                    if group == "changed outs" and how in ABSENT:
                        state.not_built = True
                    elif group == "changed deps" and how == "deleted":
                        if _made_by_a_stage(path, made):
                            state.not_built = True
                        else:
                            state.missing_inputs.append(path)
                    elif group == "changed params":
                        state.changed.append(f"params {path} ({', '.join(_names(how))})")
                    else:
                        state.changed.append(f"{path} ({how})")
        states.append(state)
    return states


def _made_by_a_stage(path: str, made: set[str]) -> bool:
    return any(path == m or path.startswith(m + "/") for m in made)


def _names(how: Any) -> Iterable[str]:
    return [f"{k} {v}" for k, v in how.items()] if isinstance(how, dict) else [str(how)]


def describe(pipeline: str, target: str, states: list[StageState]) -> list[str]:
    """The lines of the report for one pipeline."""
    if not states:
        return [f"{pipeline} ({target}): up to date"]
    lines = [f"{pipeline} ({target}): {len(states)} stage(s) listed by `dvc status`"]
    inputs = sorted({p for s in states for p in s.missing_inputs})
    if inputs:
        lines.append(
            f"  needs an input that is not here: {', '.join(inputs)} (no stage makes it; docs/real-data.md says "
            "where the NJ export comes from)"
        )
    unbuilt = [s.stage for s in states if s.not_built]
    if unbuilt:
        lines.append(
            f"  not built here: {', '.join(unbuilt)}: their outputs under data/ are not committed and have no DVC "
            f"remote; nothing to fix (`{target}` builds them; the shipped worlds and reports are committed)"
        )
    changed = [s for s in states if s.changed]
    if changed:
        lines.append(f"  changed since the lock (`{target}` runs these again and writes the new lock):")
        lines += [f"    {s.stage}: {'; '.join(s.changed)}" for s in changed]
    return lines


def dvc_status(pipeline: str, root: Path) -> dict[str, Any]:
    """`dvc status --json PIPELINE` run in `root`."""
    proc = subprocess.run(
        [sys.executable, "-m", "dvc", "status", "--json", pipeline],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"dvc status {pipeline} failed: {proc.stderr.strip()}")
    text = proc.stdout.strip()
    status: dict[str, Any] = json.loads(text) if text else {}
    return status


def main(root: Path = Path(".")) -> None:
    """Print the report for every pipeline of the repository at `root`."""
    made: set[str] = set()
    for pipeline in PIPELINES:
        made |= stage_outputs(root / pipeline, root)
    for pipeline, target in PIPELINES.items():
        for line in describe(pipeline, target, explain(dvc_status(pipeline, root), made)):
            print(line)


if __name__ == "__main__":
    main()

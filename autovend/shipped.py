"""Files that ship with AutoVend, named by a bare name wherever such a file is accepted.

- agent configs: autovend/agents/configs/NAME.yaml (`--agent-config baseline-paper`, a sweep's `config:`)
- network files: autovend/export/networks/NAME.csv (`autovend export-world --network paper-cn20`)
- sweep specs: autovend/sweep/specs/NAME.yaml (`autovend sweep baselines-cn20`)
- scenarios: autovend/world/scenarios/NAME.yaml (`autovend run --scenario heatwave`, `autovend world derive`)

They are package data (pyproject.toml), so an installed AutoVend has them outside a checkout; so is
the default price table of `openai:` runs (autovend/agents/llm/prices.yaml). The rule is the one of
world names (`autovend.world.names`): a path that exists is used as given; a bare name (no folder
part) that is no file in the current folder names the shipped file of that name, with or without
its suffix; a bare name that is neither is refused, listing the shipped names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from autovend.errors import ConfigError

PACKAGE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class ShippedKind:
    """A kind of shipped file: what it is called in messages, its folder in the package and its suffix."""

    what: str
    folder: Path
    suffix: str

    def names(self) -> list[str]:
        """The names of the shipped files of this kind (their stems), sorted."""
        try:
            return sorted(p.stem for p in self.folder.iterdir() if p.is_file() and p.suffix == self.suffix)
        except OSError:
            return []


AGENT_CONFIGS = ShippedKind("agent config", PACKAGE / "agents" / "configs", ".yaml")
NETWORKS = ShippedKind("network file", PACKAGE / "export" / "networks", ".csv")
SWEEP_SPECS = ShippedKind("sweep spec", PACKAGE / "sweep" / "specs", ".yaml")
SCENARIOS = ShippedKind("scenario", PACKAGE / "world" / "scenarios", ".yaml")


def resolve_shipped(value: str | os.PathLike[str], kind: ShippedKind) -> Path:
    """The file `value` names: an existing path as given, else the shipped file of a bare name (module docstring).

    A path with a folder part that does not exist is returned as given, for its reader to refuse.
    """
    path = Path(value)
    if path.exists():
        return path
    text = os.fspath(value)
    if not text or path.name != text or text in (".", ".."):
        return path
    shipped = kind.folder / (text if text.endswith(kind.suffix) else text + kind.suffix)
    if shipped.is_file():
        return shipped
    known = ", ".join(kind.names()) or "none"
    raise ConfigError(
        f"there is no {kind.what} {text!r}: no such file here and no shipped {kind.what} of that name "
        f"(shipped: {known}); give the path of a file or one of those names"
    )

"""Which runs may be compared: one world, one length, no run twice; and what else differs between them.

    check = check_comparable(runs)
    check.refusals  # why the runs must not be compared side by side; () when they may
    check.notes     # differences worth knowing that do not block: versions, CPU features, resumes

Runs are refused when they were made on different worlds (world hashes; worlds built in memory have
no hash and are told apart by name only), when they differ in horizon or in days settled (metrics
over 5 days and over 8 days do not measure the same thing), or when the same run is there twice:
two folders of the same agent (same name and configuration) and seed on the same world, which would
count one result twice in the per-agent mean and standard deviation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from autovend.errors import AutoVendError
from autovend.evaluation.rundata import RunData
from autovend.provenance import Provenance, provenance_differences

SHORT_HASH = 12  # characters of a world hash shown in tables


class IncomparableRunsError(AutoVendError):
    """Runs that must not be compared were given to a comparison (see `check_comparable`)."""


def short_hash(world_hash: str) -> str:
    """The first `SHORT_HASH` characters of a world hash, or "in memory" for a world without one."""
    return world_hash[:SHORT_HASH] if world_hash else "in memory"


@dataclass(frozen=True)
class RunFacts:
    """What decides whether a run compares with others, read from its run.json (or its world)."""

    label: str  # the run folder as given, or the run's name when it was built in memory
    agent: str
    agent_config: str  # canonical JSON, so that equal configurations compare equal
    seed: int
    world_name: str
    world_hash: str  # "" for a world built in memory
    horizon_days: int
    days: int  # days settled
    provenance: Provenance | None  # None: run.json holds no (readable) record
    provenance_changes: tuple[str, ...]  # the warnings of resumes on another stack

    @classmethod
    def of(cls, run: RunData) -> RunFacts:
        """The facts of one run."""
        meta = run.meta
        try:
            provenance = Provenance.from_json(meta["provenance"])
        except (KeyError, ValueError):
            provenance = None
        changes = meta.get("provenance_changes") or []
        return cls(
            label=str(run.run_dir) if run.run_dir is not None else run.name,
            agent=run.agent,
            agent_config=json.dumps(meta.get("agent_config") or {}, sort_keys=True),
            seed=run.seed,
            world_name=str(meta.get("world_name") or run.world.name),
            world_hash=run.world_hash,
            horizon_days=int(meta.get("horizon_days") or run.world.horizon_days),
            days=run.days,
            provenance=provenance,
            provenance_changes=tuple(str(c.get("warning", c)) if isinstance(c, dict) else str(c) for c in changes),
        )

    @property
    def world_key(self) -> str:
        """The world's identity: its hash, or its name for a world built in memory."""
        return self.world_hash or f"in memory: {self.world_name}"

    @property
    def world(self) -> str:
        """The world as shown: name and short hash."""
        return f"{self.world_name} ({short_hash(self.world_hash)})"


@dataclass(frozen=True)
class Comparability:
    """The verdict on a set of runs: reasons to refuse the comparison, and notes that do not block it."""

    refusals: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def comparable(self) -> bool:
        """True when nothing stands against comparing the runs."""
        return not self.refusals

    def explain(self) -> str:
        """The refusals as a message, one reason a line."""
        return "these runs cannot be compared:\n" + "\n".join(f"  - {r}" for r in self.refusals)


def _groups(facts: Sequence[RunFacts], key: Callable[[RunFacts], Hashable]) -> dict[Hashable, list[RunFacts]]:
    """The runs grouped by `key`, groups and runs in the order given."""
    out: dict[Hashable, list[RunFacts]] = {}
    for f in facts:
        out.setdefault(key(f), []).append(f)
    return out


def _labels(facts: Sequence[RunFacts]) -> str:
    return ", ".join(f.label for f in facts)


def refusals(facts: Sequence[RunFacts]) -> list[str]:
    """Why the runs must not be compared ([] when they may): worlds, lengths, runs given twice."""
    out = []
    worlds = _groups(facts, lambda f: f.world_key)
    if len(worlds) > 1:
        parts = [f"world {g[0].world} in {_labels(g)}" for g in worlds.values()]
        out.append("they were made on different worlds: " + "; ".join(parts))
    lengths = _groups(facts, lambda f: (f.days, f.horizon_days))
    if len(lengths) > 1:
        parts = [f"{g[0].days} of {g[0].horizon_days} days in {_labels(g)}" for g in lengths.values()]
        out.append("they differ in horizon or days played: " + "; ".join(parts))
    for group in _groups(facts, lambda f: (f.world_key, f.agent, f.agent_config, f.seed)).values():
        if len(group) > 1:
            f = group[0]
            out.append(
                f"the same agent and seed twice: {f.agent} (same configuration), seed {f.seed}, on world {f.world}, "
                f"in {_labels(group)}"
            )
    return out


def notes(facts: Sequence[RunFacts]) -> list[str]:
    """Differences that do not block a comparison but may explain differences in its numbers."""
    out = []
    memory = [f for f in facts if not f.world_hash]
    if memory:
        out.append(f"worlds built in memory have no hash, so only their names were compared: {_labels(memory)}")
    unrecorded = [f for f in facts if f.provenance is None]
    if unrecorded:
        out.append(f"no record of the versions and CPU features they ran with: {_labels(unrecorded)}")
    recorded = [f for f in facts if f.provenance is not None]
    for f in recorded[1:]:
        diff = provenance_differences(recorded[0].provenance, f.provenance)  # type: ignore[arg-type]
        if diff:
            out.append(f"{f.label} ran on another stack than {recorded[0].label}: {'; '.join(diff)}")
    for f in facts:
        out.extend(f"{f.label} was {w}" for w in f.provenance_changes)
    return out


def check_comparable(runs: Sequence[RunData]) -> Comparability:
    """Whether `runs` may be compared, and what to note about them (see the module docstring)."""
    facts = [RunFacts.of(r) for r in runs]
    return Comparability(tuple(refusals(facts)), tuple(notes(facts)))

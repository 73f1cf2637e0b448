"""leaderboard.md of a sweep: per world, the agents ranked by mean net assets, every headline metric as mean ± std.

Runs are pooled only where `autovend compare` would compare them (`autovend.evaluation.comparability`):
one table per world hash and length (days played of the horizon), never across them; the runs of
one table are checked with the same rules (`refusals`), and what does not block pooling but may
explain differences (versions and CPU features, resumes on another stack) is listed under the
table (`notes`). The standard deviation is the sample one (ddof 1) over seeds; with one run it is
not shown. Runs that are not finished are listed at the end.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from autovend.evaluation.comparability import RunFacts, notes, refusals, short_hash
from autovend.evaluation.definitions import HEADLINE
from autovend.io import atomic_write_text
from autovend.provenance import Provenance
from autovend.sweep.results import ResultRow

LEADERBOARD_FILE = "leaderboard.md"


def run_facts(row: ResultRow) -> RunFacts:
    """The comparability facts of a finished run, from its run.json (what `RunFacts.of` reads of a loaded run)."""
    meta = row.meta
    try:
        provenance = Provenance.from_json(meta["provenance"])
    except (KeyError, TypeError, ValueError):
        provenance = None
    changes = meta.get("provenance_changes") or []
    return RunFacts(
        label=row.run_dir,
        agent=row.agent_name,
        agent_config=json.dumps(meta.get("agent_config") or {}, sort_keys=True),
        seed=row.seed,
        world_name=str(meta.get("world_name") or row.world),
        world_hash=row.world_hash,
        horizon_days=row.horizon_days,
        days=row.days,
        provenance=provenance,
        provenance_changes=tuple(str(c.get("warning", c)) if isinstance(c, dict) else str(c) for c in changes),
    )


@dataclass(frozen=True)
class Cell:
    """Mean and sample standard deviation of one metric over an agent's runs (None: no value / one value)."""

    mean: float | None
    std: float | None
    n: int


def cell(values: Sequence[float | int | None]) -> Cell:
    """The mean and sample std of the values that are there."""
    xs = [float(v) for v in values if v is not None]
    if not xs:
        return Cell(None, None, 0)
    return Cell(statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else None, len(xs))


@dataclass(frozen=True)
class AgentLine:
    """One agent on one world: its runs, seeds and metric cells."""

    agent: str
    agent_name: str
    seeds: tuple[int, ...]
    cells: dict[str, Cell]  # HEADLINE keys and api_cost_usd


@dataclass(frozen=True)
class Table:
    """The agents of one comparable group of runs: one world (hash) at one length."""

    world: str
    world_name: str
    world_hash: str
    days: int
    horizon_days: int
    lines: tuple[AgentLine, ...]  # best mean net assets first
    notes: tuple[str, ...]


def group_key(row: ResultRow) -> tuple[str, str, int, int]:
    """The comparable group of a run: world label, world hash, days played, horizon."""
    return (row.world, row.world_hash, row.days, row.horizon_days)


def tables(rows: Sequence[ResultRow]) -> list[Table]:
    """The comparable groups of `rows` (in the order met) with one line per agent, ranked by mean net assets."""
    groups: dict[tuple[str, str, int, int], list[ResultRow]] = {}
    for r in rows:
        groups.setdefault(group_key(r), []).append(r)
    out = []
    for (world, world_hash, days, horizon), group in groups.items():
        facts = [run_facts(r) for r in group]
        by_agent: dict[str, list[ResultRow]] = {}
        for r in group:
            by_agent.setdefault(r.agent, []).append(r)
        lines = []
        for agent, runs in by_agent.items():
            cells = {k: cell([r.metrics.get(k) for r in runs]) for k in HEADLINE}
            cells["api_cost_usd"] = cell([r.api_cost_usd for r in runs])
            lines.append(AgentLine(agent, runs[0].agent_name, tuple(r.seed for r in runs), cells))
        lines.sort(key=lambda a: -(a.cells["net_assets"].mean if a.cells["net_assets"].mean is not None else -1e300))
        # within a group the refusals can only be runs given twice (world and length are the group's key)
        blocking = [f"not pooled as it should be: {r}" for r in refusals(facts)]
        world_name = facts[0].world_name
        out.append(Table(world, world_name, world_hash, days, horizon, tuple(lines), (*blocking, *notes(facts))))
    return out


def _fmt(key: str, value: float | None) -> str:
    if value is None:
        return "–"
    if key == "api_cost_usd":
        return f"{value:.4f}"
    _, _, fmt, scale = HEADLINE[key]
    return fmt.format(value * scale)


def show(key: str, c: Cell) -> str:
    """A cell as text: the mean, and ± the std when there is one ("–" without a value)."""
    text = _fmt(key, c.mean)
    if c.std is not None:
        text += f" ± {_fmt(key, c.std)}"
    return text


def leaderboard_markdown(
    rows: Sequence[ResultRow], unfinished: Sequence[str] = (), spec_runs: int | None = None, title: str = "Leaderboard"
) -> str:
    """The leaderboard (see the module docstring); `unfinished` names the spec's runs without a result."""
    keys = [*HEADLINE, "api_cost_usd"]
    total = spec_runs if spec_runs is not None else len(rows) + len(unfinished)
    lines = [f"# {title}", ""]
    lines.append(
        f"{len(rows)} of {total} runs finished. Each cell is the mean over the agent's runs (seeds) ± the sample "
        "standard deviation (ddof 1; not shown for one run). Runs made on different worlds (world hashes) or of "
        "different lengths are never pooled: each table is one world at one length, as `autovend compare` "
        "requires. Metrics and units: `autovend.evaluation.metrics`; API cost in USD."
    )
    groups = tables(rows)
    labels = [t.world for t in groups]
    for t in groups:
        split = labels.count(t.world) > 1
        lines += [
            "",
            f"## {t.world}: world {t.world_name} ({short_hash(t.world_hash)}), {t.days} of {t.horizon_days} days",
        ]
        if split:
            lines += [
                "",
                f"The runs on {t.world} are split into several tables because they were made on different world "
                "hashes or lengths; they are not pooled.",
            ]
        header = " | ".join(f"{HEADLINE[k][0]} ({HEADLINE[k][1]})" if k in HEADLINE else "API cost (USD)" for k in keys)
        lines += ["", f"| rank | agent | runs | seeds | {header} |", "|---:|---|---:|---|" + "---:|" * len(keys)]
        for rank, a in enumerate(t.lines, start=1):
            seeds = ", ".join(str(s) for s in a.seeds)
            cells = " | ".join(show(k, a.cells[k]) for k in keys)
            lines.append(f"| {rank} | {a.agent} | {len(a.seeds)} | {seeds} | {cells} |")
        if t.notes:
            lines += ["", "Notes:", ""] + [f"- {n}" for n in t.notes]
    if unfinished:
        lines += ["", "## Runs without a result", ""] + [f"- {name}" for name in unfinished]
    return "\n".join(lines) + "\n"


def write_leaderboard(
    rows: Sequence[ResultRow], out_dir: str | Path, unfinished: Sequence[str] = (), spec_runs: int | None = None
) -> Path:
    """Write OUT/leaderboard.md (replaced atomically); return its path."""
    path = Path(out_dir) / LEADERBOARD_FILE
    atomic_write_text(path, leaderboard_markdown(rows, unfinished, spec_runs))
    return path

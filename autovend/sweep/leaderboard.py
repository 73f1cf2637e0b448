"""leaderboard.md of a sweep: per world, the agents ranked by mean net assets, every headline metric as mean ± std.

Runs are pooled only where `autovend compare` would compare them (`autovend.evaluation.comparability`):
one table per world hash and length (days played of the horizon), never across them; the runs of
one table are checked with the same rules (`refusals`), and what does not block pooling but may
explain differences (versions and CPU features, resumes on another stack) is listed under the
table (`notes`). The standard deviation is the sample one (ddof 1) over seeds; with one run it is
not shown. Runs that are not finished are listed at the end.

Ranks come from paired differences over seeds (`autovend.sweep.standing`): agents whose paired 95% t
interval of net assets does not exclude zero share a rank ("2="). Each table shows the agents' mean
normalised score ((agent - hold) / (oracle - hold); the oracle, a privileged reference, is marked), how
many of their runs `autovend verify` found equal, and below it the paired differences of net assets.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from autovend.currency import MIXED, common_currency
from autovend.evaluation.comparability import RunFacts, notes, refusals, short_hash
from autovend.evaluation.definitions import HEADLINE, metric_header
from autovend.io import atomic_write_text
from autovend.provenance import Provenance
from autovend.sweep.results import ResultRow
from autovend.sweep.standing import GroupStanding, group_key, group_standing, row_standings

LEADERBOARD_FILE = "leaderboard.md"
NORMALISED = "normalised_score"


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
    cells: dict[str, Cell]  # HEADLINE keys, api_cost_usd and normalised_score
    verified: tuple[bool | None, ...] = ()  # per run: `autovend verify`'s outcome (None: not verified)
    rank: str = ""  # "1", "2=", ... (`autovend.sweep.standing`)
    privileged: bool = False  # the oracle: reads the hidden demand model

    @property
    def shown(self) -> str:
        """The agent's label, marked when it is privileged."""
        return f"{self.agent} (privileged)" if self.privileged else self.agent

    @property
    def verified_text(self) -> str:
        """How many of its runs were verified equal, of those checked ("–" when none was checked)."""
        checked = [v for v in self.verified if v is not None]
        return f"{sum(checked)}/{len(self.verified)}" if checked else "–"


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
    standing: GroupStanding | None = None  # paired differences and ranks
    currency: str = MIXED  # the world's (`autovend.currency.common_currency` of its runs)


def tables(rows: Sequence[ResultRow]) -> list[Table]:
    """The comparable groups of `rows` (in the order met) with one line per agent, ranked by mean net assets."""
    groups: dict[tuple[str, str, int, int], list[ResultRow]] = {}
    for r in rows:
        groups.setdefault(group_key(r), []).append(r)
    out = []
    scores = dict(zip((id(r) for r in rows), (s.normalised_score for s in row_standings(rows)), strict=True))
    for (world, world_hash, days, horizon), group in groups.items():
        facts = [run_facts(r) for r in group]
        standing = group_standing(group)
        by_agent: dict[str, list[ResultRow]] = {}
        for r in group:
            by_agent.setdefault(r.agent, []).append(r)
        lines = []
        for agent, runs in by_agent.items():
            cells = {k: cell([r.metrics.get(k) for r in runs]) for k in HEADLINE}
            cells["api_cost_usd"] = cell([r.api_cost_usd for r in runs])
            cells[NORMALISED] = cell([scores[id(r)] for r in runs])
            verified = tuple(r.verified for r in runs)
            rank = standing.ranks.get(agent, "")
            privileged = any(r.privileged for r in runs)
            lines.append(
                AgentLine(agent, runs[0].agent_name, tuple(r.seed for r in runs), cells, verified, rank, privileged)
            )
        lines.sort(key=lambda a: -(a.cells["net_assets"].mean if a.cells["net_assets"].mean is not None else -1e300))
        # within a group the refusals can only be runs given twice (world and length are the group's key)
        blocking = [f"not pooled as it should be: {r}" for r in refusals(facts)]
        world_name = facts[0].world_name
        notes_ = (*blocking, *notes(facts))
        currency = common_currency(r.currency for r in group if r.currency)
        out.append(Table(world, world_name, world_hash, days, horizon, tuple(lines), notes_, standing, currency))
    return out


def _fmt(key: str, value: float | None) -> str:
    if value is None:
        return "–"
    if key == "api_cost_usd":
        return f"{value:.4f}"
    if key == NORMALISED:
        return f"{value:.3f}"
    _, _, fmt, scale = HEADLINE[key]
    return fmt.format(value * scale)


def show(key: str, c: Cell) -> str:
    """A cell as text: the mean, and ± the std when there is one ("–" without a value)."""
    text = _fmt(key, c.mean)
    if c.std is not None:
        text += f" ± {_fmt(key, c.std)}"
    return text


RANK_NOTE = (
    "Rank: by mean net assets; agents share a rank (2=) where the paired 95% t interval of their net assets over "
    "common seeds does not exclude zero. Normalised score: (agent − hold) / (oracle − hold), where the oracle is "
    "a privileged reference that reads the hidden demand model. Verified: runs `autovend verify` re-simulated "
    "and found equal, of the agent's runs. Every pair on every metric: paired.csv."
)


def column_header(key: str, currency: str) -> str:
    """A metric's column header (label and unit, money in `currency`)."""
    if key == "api_cost_usd":
        return "API cost (USD)"
    if key == NORMALISED:
        return "Normalised score"
    return metric_header(key, currency)


def _money(x: float | None, sign: bool = True) -> str:
    return "–" if x is None else f"{x:{'+' if sign else ''},.0f}"


PAIRED_INTRO = (
    "Paired differences of net assets ({currency}; a − b over common seeds; intervals 95%; minimum detectable "
    "difference at the seeds used / 5 / 10 seeds, paired t-test at 5% with 80% power):"
)  # {currency}: the table's
PAIRED_HEADER = ("a − b", "seeds", "mean difference", "paired (t)", "unpaired (Welch)", "min. detectable")


def paired_rows(t: Table) -> list[list[str]]:
    """The table's paired differences of net assets (its currency) as cells (`PAIRED_HEADER`), best agent first."""
    rows = []
    for p in (p for p in (t.standing.paired if t.standing else ()) if p.metric == "net_assets"):
        paired_ = "–" if p.ci_low is None else f"[{_money(p.ci_low)}, {_money(p.ci_high)}]"
        unpaired = "–" if p.unpaired_low is None else f"[{_money(p.unpaired_low)}, {_money(p.unpaired_high)}]"
        mdd = " / ".join(
            _money(x, sign=False)
            for x in (p.min_detectable_difference, p.min_detectable_difference_5, p.min_detectable_difference_10)
        )
        rows.append([f"{p.a} − {p.b}", str(p.n_seeds), _money(p.mean_difference), paired_, unpaired, mdd])
    return rows


def paired_lines(t: Table) -> list[str]:
    """`paired_rows` as a markdown table after `PAIRED_INTRO` (nothing when the table has no pair)."""
    rows = paired_rows(t)
    if not rows:
        return []
    lines = [
        "",
        PAIRED_INTRO.format(currency=t.currency),
        "",
        "| " + " | ".join(PAIRED_HEADER) + " |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    return lines + ["| " + " | ".join(r) + " |" for r in rows]


def leaderboard_markdown(
    rows: Sequence[ResultRow],
    unfinished: Sequence[str] = (),
    spec_runs: int | None = None,
    title: str = "Leaderboard",
    extra: str = "",
) -> str:
    """The leaderboard (see the module docstring); `unfinished` names the spec's runs without a result.

    `extra`: a markdown section put after the introduction (the robustness summary of a sweep with variants).
    """
    keys = ["net_assets", NORMALISED, *(k for k in HEADLINE if k != "net_assets"), "api_cost_usd"]
    total = spec_runs if spec_runs is not None else len(rows) + len(unfinished)
    lines = [f"# {title}", ""]
    lines.append(
        f"{len(rows)} of {total} runs finished. Each cell is the mean over the agent's runs (seeds) ± the sample "
        "standard deviation (ddof 1; not shown for one run). Runs made on different worlds (world hashes) or of "
        "different lengths are never pooled: each table is one world at one length, as `autovend compare` "
        "requires. Metrics and units: `autovend.evaluation.metrics`; API cost in USD."
    )
    lines += ["", RANK_NOTE]
    if extra:
        lines += ["", extra.rstrip("\n")]
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
        header = " | ".join(column_header(k, t.currency) for k in keys)
        lines += [
            "",
            f"| rank | agent | runs | seeds | verified | {header} |",
            "|---:|---|---:|---|---:|" + "---:|" * len(keys),
        ]
        for a in t.lines:
            seeds = ", ".join(str(s) for s in a.seeds)
            cells = " | ".join(show(k, a.cells[k]) for k in keys)
            lines.append(f"| {a.rank} | {a.shown} | {len(a.seeds)} | {seeds} | {a.verified_text} | {cells} |")
        lines += paired_lines(t)
        if t.notes:
            lines += ["", "Notes:", ""] + [f"- {n}" for n in t.notes]
    if unfinished:
        lines += ["", "## Runs without a result", ""] + [f"- {name}" for name in unfinished]
    return "\n".join(lines) + "\n"


def write_leaderboard(
    rows: Sequence[ResultRow],
    out_dir: str | Path,
    unfinished: Sequence[str] = (),
    spec_runs: int | None = None,
    extra: str = "",
) -> Path:
    """Write OUT/leaderboard.md (replaced atomically); return its path. `extra`: see `leaderboard_markdown`."""
    path = Path(out_dir) / LEADERBOARD_FILE
    atomic_write_text(path, leaderboard_markdown(rows, unfinished, spec_runs, extra=extra))
    return path

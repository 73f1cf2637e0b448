"""Whether a sweep's ranking holds across the variants of its worlds: robustness.md, robustness.json and the heat map.

For every world of a sweep with variants (`autovend.sweep.variants`: the world itself, changed by each scenario,
drawn from its identified set), from the runs of each variant (its own world hash, at the sweep's length):

- the agents' order in each variant, by mean net assets over the seeds (`autovend.evaluation.paired.rank_order`);
- Kendall's tau between the world's own order and each variant's, over the agents both have: (concordant -
  discordant pairs) / all pairs, 1 when the order is the same, -1 when it is reversed (orders have no ties);
- for each pair of agents A (ahead in the world itself) and B: in how many variants the paired 95% interval of
  A - B over the seeds (`autovend.evaluation.paired`) lies above zero (A beats B), below zero (B beats A), or
  covers zero (not told apart), the share of variants A beats B in with its 95% Wilson interval over variants, and
  the median over variants of the mean paired difference;
- a sentence for each variant in which a pair's order flips against the world's own, with both paired intervals;
- each agent's mean normalised score in each variant ((agent - hold) / (oracle - hold), `autovend.sweep.standing`),
  drawn as a heat map (robustness.html); where a variant has no hold or oracle reference, the agents' mean net
  assets scaled from the variant's worst (0) to its best (1) instead, and the page says so.

Variants whose runs are not all finished are counted with the agents and seeds they have.
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from autovend.canonical import canonical_value
from autovend.evaluation.paired import PairedDifference, paired_differences, rank_order
from autovend.sweep.results import ResultRow
from autovend.sweep.standing import row_standings
from autovend.sweep.variants import Variant

ROBUSTNESS_FILE = "robustness.md"
ROBUSTNESS_JSON = "robustness.json"
ROBUSTNESS_HTML = "robustness.html"
ROBUSTNESS_FILES = (ROBUSTNESS_FILE, ROBUSTNESS_JSON, ROBUSTNESS_HTML)
Z95 = 1.959963984540054


def kendall_tau(first: Sequence[str], second: Sequence[str]) -> float | None:
    """Kendall's tau of two orders of (mostly) the same items, over the items in both (None under two)."""
    common = [x for x in first if x in set(second)]
    if len(common) < 2:
        return None
    pos = {x: i for i, x in enumerate(second)}
    concordant = discordant = 0
    for i, a in enumerate(common):
        for b in common[i + 1 :]:
            if pos[a] < pos[b]:
                concordant += 1
            else:
                discordant += 1
    return (concordant - discordant) / (concordant + discordant)


def wilson(k: int, n: int) -> tuple[float, float] | None:
    """The 95% Wilson score interval of a share k / n (None for n = 0)."""
    if n == 0:
        return None
    p = k / n
    den = 1 + Z95**2 / n
    mid = (p + Z95**2 / (2 * n)) / den
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


@dataclass(frozen=True)
class VariantStanding:
    """One variant's order, its paired differences of net assets and its agents' scores."""

    label: str
    kind: str
    name: str
    summary: str
    order: tuple[str, ...]
    paired: tuple[PairedDifference, ...]
    score: dict[str, float | None]  # mean normalised score (or scaled net assets) by agent
    net_assets: dict[str, float]  # mean net assets by agent
    seeds: int
    scaled: bool  # True: `score` is the net assets scaled within the variant (no hold or oracle reference)
    tau: float | None = None  # Kendall's tau against the world's own order

    def pair(self, a: str, b: str) -> PairedDifference | None:
        """The paired difference a - b in this variant (None when the two have no common seed)."""
        for p in self.paired:
            if (p.a, p.b) == (a, b):
                return p
            if (p.a, p.b) == (b, a):
                return _flipped(p)
        return None


def _flipped(p: PairedDifference) -> PairedDifference:
    neg = lambda x: None if x is None else -x  # noqa: E731
    return PairedDifference(
        p.b,
        p.a,
        p.metric,
        p.n_seeds,
        p.seeds,
        -p.mean_difference,
        neg(p.ci_high),
        neg(p.ci_low),
        p.sd_difference,
        neg(p.unpaired_high),
        neg(p.unpaired_low),
        p.min_detectable_difference,
        p.min_detectable_difference_5,
        p.min_detectable_difference_10,
    )


@dataclass(frozen=True)
class PairRecord:
    """A pair of agents over the variants of one world (module docstring)."""

    a: str
    b: str
    variants: int
    a_wins: int
    b_wins: int
    undecided: int
    share: float
    share_low: float | None
    share_high: float | None
    median_difference: float | None


@dataclass(frozen=True)
class WorldRobustness:
    """Everything the report says of one world and its variants."""

    world: str
    variants: tuple[VariantStanding, ...]  # the world itself first
    pairs: tuple[PairRecord, ...]
    flips: tuple[str, ...]


def _standing(
    variant: Variant, rows: Sequence[ResultRow], scores: dict[tuple[str, int], float | None]
) -> VariantStanding:
    results: dict[str, dict[int, dict[str, float | int | None]]] = {}
    for r in rows:
        if r.net_assets is not None:  # a finished run always has them; a row without is left out
            results.setdefault(r.agent, {})[r.seed] = {"net_assets": r.net_assets}
    order = rank_order(results)
    paired = paired_differences(results, ("net_assets",), order)
    means = {
        a: statistics.fmean(float(v["net_assets"]) for v in s.values() if v["net_assets"] is not None)
        for a, s in results.items()
    }
    score: dict[str, float | None] = {}
    for a in results:
        got = [scores.get((a, s)) for s in results[a]]
        score[a] = statistics.fmean(x for x in got if x is not None) if all(x is not None for x in got) else None
    scaled = any(v is None for v in score.values())
    if scaled and means:
        lo, hi = min(means.values()), max(means.values())
        score = {a: (m - lo) / (hi - lo) if hi > lo else 1.0 for a, m in means.items()}
    return VariantStanding(
        variant.label,
        variant.kind,
        variant.name,
        variant.summary,
        tuple(order),
        tuple(paired),
        score,
        means,
        len({r.seed for r in rows}),
        scaled,
    )


def _money(x: float | None) -> str:
    return "–" if x is None else f"{x:+,.0f}"


def _interval(p: PairedDifference | None) -> str:
    if p is None:
        return "no common seed"
    if p.ci_low is None:
        return f"{_money(p.mean_difference)} (one seed: no interval)"
    return f"{_money(p.mean_difference)} [{_money(p.ci_low)}, {_money(p.ci_high)}]"


def _flip_sentences(base: VariantStanding, v: VariantStanding) -> list[str]:
    out = []
    place = {a: i for i, a in enumerate(v.order)}
    for i, a in enumerate(base.order):
        for b in base.order[i + 1 :]:
            if a in place and b in place and place[b] < place[a]:
                now, before = v.pair(b, a), base.pair(a, b)
                held = "its interval excludes zero" if now is not None and now.significant else "not told apart"
                out.append(
                    f"In {v.label} ({v.kind} {v.name}), {b} finishes above {a}: {b} − {a} {_interval(now)} "
                    f"({held}); on {base.label} {a} − {b} was {_interval(before)}."
                )
    return out


def world_robustness(world: str, variants: Sequence[Variant], rows: Sequence[ResultRow]) -> WorldRobustness:
    """The robustness of one world's ranking over its variants (module docstring)."""
    scores = {}
    for r, s in zip(rows, row_standings(rows), strict=True):
        scores[(r.world, r.agent, r.seed)] = s.normalised_score
    standings = []
    for v in variants:
        mine = [r for r in rows if r.world == v.label]
        if not mine:
            continue
        own = {(a, s): x for (w, a, s), x in scores.items() if w == v.label}
        standings.append(_standing(v, mine, own))
    if not standings:
        return WorldRobustness(world, (), (), ())
    base = standings[0]
    standings = [base] + [dataclasses.replace(s, tau=kendall_tau(base.order, s.order)) for s in standings[1:]]
    pairs = []
    for i, a in enumerate(base.order):
        for b in base.order[i + 1 :]:
            found = [p for p in (s.pair(a, b) for s in standings) if p is not None]
            wins = sum(1 for p in found if p.ci_low is not None and p.ci_low > 0)
            losses = sum(1 for p in found if p.ci_high is not None and p.ci_high < 0)
            n = len(found)
            ci = wilson(wins, n)
            pairs.append(
                PairRecord(
                    a,
                    b,
                    n,
                    wins,
                    losses,
                    n - wins - losses,
                    wins / n if n else 0.0,
                    None if ci is None else ci[0],
                    None if ci is None else ci[1],
                    statistics.median(p.mean_difference for p in found) if found else None,
                )
            )
    flips = [s for v in standings[1:] for s in _flip_sentences(base, v)]
    return WorldRobustness(world, tuple(standings), tuple(pairs), tuple(flips))


def robustness(rows: Sequence[ResultRow], variants: Sequence[Variant]) -> list[WorldRobustness]:
    """`world_robustness` of every world with variants, in the order of the variants list."""
    worlds = list(dict.fromkeys(v.base for v in variants))
    return [world_robustness(w, [v for v in variants if v.base == w], rows) for w in worlds]


# ------------------------------------------------------------------------------------------------ markdown


def _share(p: PairRecord) -> str:
    ci = "–" if p.share_low is None else f"[{p.share_low:.2f}, {p.share_high:.2f}]"
    return f"{p.share:.2f} {ci}"


def summary_markdown(report: Sequence[WorldRobustness]) -> str:
    """The leaderboard's section: per world, each pair's share of variants and the variants that flip."""
    lines = ["## Across variants", ""]
    lines.append(
        "Each world was also run as each of its variants (scenarios, draws from its identified set; "
        "robustness.md and robustness.html have the details). For each pair, A ahead on the world itself: the "
        "variants in which A's paired 95% interval over seeds lies above zero (A beats B), below it, or covers it, "
        "and the share A beats B in (95% Wilson interval over variants)."
    )
    for w in report:
        taus = [v.tau for v in w.variants[1:] if v.tau is not None]
        lines += ["", f"### {w.world}: {len(w.variants)} variants"]
        if taus:
            lines += [
                "",
                f"Kendall's tau with the order on {w.world}: median {statistics.median(taus):.2f}, "
                f"lowest {min(taus):.2f}; {sum(1 for t in taus if t < 1)} of {len(taus)} variants reorder it.",
            ]
        lines += [
            "",
            "| A | B | variants | A beats B | B beats A | not told apart | share A beats B | median A − B |",
            "|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        for p in w.pairs:
            lines.append(
                f"| {p.a} | {p.b} | {p.variants} | {p.a_wins} | {p.b_wins} | {p.undecided} | {_share(p)} | "
                f"{_money(p.median_difference)} |"
            )
    return "\n".join(lines) + "\n"


def robustness_markdown(report: Sequence[WorldRobustness]) -> str:
    """robustness.md: the summary, each variant's order and tau, and the flips in sentences."""
    lines = ["# Rankings across variants", "", __doc__.split("\n\n", 1)[1].split("Variants whose")[0].strip(), ""]
    lines.append(summary_markdown(report).replace("## Across variants", "## Pairs").rstrip())
    for w in report:
        lines += [
            "",
            f"## {w.world}: the order in each variant",
            "",
            "| variant | kind | what changes | seeds | order (best first) | Kendall's tau |",
            "|---|---|---|---:|---|---:|",
        ]
        for v in w.variants:
            tau = "–" if v.tau is None else f"{v.tau:.2f}"
            what = (v.summary or "the world as it is").replace("|", "/").replace("\n", " ")
            lines.append(f"| {v.label} | {v.kind} | {what} | {v.seeds} | {' > '.join(v.order)} | {tau} |")
        lines += ["", f"### Where the order of {w.world} flips", ""]
        lines += [f"- {s}" for s in w.flips] if w.flips else [f"- No variant changes the order of {w.world}."]
    return "\n".join(lines) + "\n"


def robustness_json(report: Sequence[WorldRobustness]) -> str:
    """robustness.json: every number of the report."""
    data = []
    for w in report:
        data.append(
            {
                "world": w.world,
                "variants": [
                    {
                        "label": v.label,
                        "kind": v.kind,
                        "name": v.name,
                        "order": list(v.order),
                        "tau": v.tau,
                        "seeds": v.seeds,
                        "score": v.score,
                        "score_is_scaled_net_assets": v.scaled,
                        "net_assets": v.net_assets,
                        "paired": [p.to_json() for p in v.paired],
                    }
                    for v in w.variants
                ],
                "pairs": [asdict(p) for p in w.pairs],
                "flips": list(w.flips),
            }
        )
    return json.dumps(canonical_value(data), indent=1, sort_keys=True, ensure_ascii=False) + "\n"

"""Benchmark: the headroom on worlds/cn20: hold, the two baselines and the privileged oracle, and paired differences.

Runs hold (examples/agents/hold.py:HoldAgent), the default baseline, the paper's baseline (the shipped
`--agent-config baseline-paper`) and the oracle (`--agent oracle`, privileged: it reads the hidden demand
model) on the same seeds, prints each one's final net assets and normalised score (agent - hold) / (oracle - hold),
the paired differences of net assets (95% t interval, unpaired Welch interval, minimum detectable difference),
and checks that the oracle beats the default baseline on every seed. The default is issue [Q]'s check: 180 days,
seeds 1-3 (about 4 minutes here); `--days 30 --seeds 1 2 3 4 5` gives the 30-day comparison.

    .venv/bin/python benchmarks/bench_headroom.py [--days N] [--seeds S ...]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from autovend.agents.plugins import load_agent
from autovend.evaluation.headroom import normalised_score
from autovend.evaluation.paired import paired_difference
from autovend.runner import run_episode
from autovend.shipped import AGENT_CONFIGS
from autovend.world.bundle import load_world

WORLD = Path("worlds/cn20")
ROOT = Path(__file__).resolve().parents[1]
AGENTS = {
    "hold": (str(ROOT / "examples" / "agents" / "hold.py") + ":HoldAgent", None),
    "baseline": ("baseline", None),
    "baseline-paper": ("baseline", AGENT_CONFIGS.folder / "baseline-paper.yaml"),
    "oracle (privileged)": ("oracle", None),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=180)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args()
    world = load_world(WORLD)
    net: dict[str, dict[int, float]] = {name: {} for name in AGENTS}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (spec, config) in AGENTS.items():
            t = time.perf_counter()
            for seed in args.seeds:
                agent = load_agent(spec, seed, config)
                out = Path(tmp) / f"{name}-s{seed}".replace(" ", "_")
                summary = run_episode(world, agent, seed, days=args.days, out_dir=out, checkpoint="off", evaluate=False)
                net[name][seed] = summary.final_net_assets
            print(f"{name}: {len(args.seeds)} runs of {args.days} days in {time.perf_counter() - t:.1f} s")
    hold, oracle = net["hold"], net["oracle (privileged)"]
    print(
        f"\nworlds/cn20, {args.days} days: final net assets (CNY) and normalised score (agent - hold) / (oracle - hold)"
    )
    print("| agent | " + " | ".join(f"seed {s}" for s in args.seeds) + " | normalised |")
    print("|---|" + "---:|" * (len(args.seeds) + 1))
    for name, values in net.items():
        scores = [normalised_score(values[s], hold[s], oracle[s]) for s in args.seeds]
        shown = " / ".join("–" if x is None else f"{x:.3f}" for x in scores)
        print(f"| {name} | " + " | ".join(f"{values[s]:,.2f}" for s in args.seeds) + f" | {shown} |")
    print("\npaired differences of net assets (CNY): mean, paired 95% t, unpaired 95% Welch, min. detectable n/5/10")
    for a, b in (("baseline", "baseline-paper"), ("baseline", "hold"), ("oracle (privileged)", "baseline")):
        p = paired_difference(a, b, "net_assets", net[a], net[b])
        mdd = (p.min_detectable_difference, p.min_detectable_difference_5, p.min_detectable_difference_10)
        print(
            f"  {a} - {b}: {p.mean_difference:+,.2f}, [{p.ci_low:+,.2f}, {p.ci_high:+,.2f}] against "
            f"[{p.unpaired_low:+,.2f}, {p.unpaired_high:+,.2f}], " + " / ".join(f"{x:,.2f}" for x in mdd if x)
        )
    beaten = all(oracle[s] > net["baseline"][s] for s in args.seeds)
    print(f"\noracle beats the default baseline on every seed: {beaten}")
    if not beaten:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

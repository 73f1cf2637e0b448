"""The normalised score: where an agent lands between holding its cash (0) and the privileged oracle (1).

    score = (agent - hold) / (oracle - hold)

with the final net assets of the three on the same world, horizon, seed and number of days:

- **hold** is `autovend.agents.hold:HoldAgent` (docs/agents.md's example), which buys nothing: its net assets
  are the start cash less the daily fee of every day played, start_cash - days x machine_rent_per_day x machines
  (`hold_net_assets`, held to a run of the agent by the tests), the same on every seed;
- **oracle** is `autovend run --agent oracle` (`autovend.agents.oracle`), the PRIVILEGED reference policy that
  plans with the hidden demand model. Its plan does not depend on how many days are played, so the first
  `days` of a full run are its `days`-day result.

`Reference` holds both for one (world, seed, days), from (in this order) oracle runs given alongside
(a comparison or a sweep that ran it), the world's manifest (`autovend world ship --oracle-run` writes the
oracle's daily net assets of each shipped seed under "references"), or, where asked, an oracle run made
on the spot in memory (`compute_reference`). A score above 1 beats the oracle (it is a reference, not a bound);
below 0 loses money against holding it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autovend.agents.identity import ORACLE_ENTRY_POINT
from autovend.world.model import World

if TYPE_CHECKING:
    from autovend.evaluation.rundata import RunData

REFERENCES_KEY = "references"  # the world manifest's entry (`autovend.export.ship`)
ORACLE = "oracle"


@dataclass(frozen=True)
class Reference:
    """The hold and oracle net assets of one world, seed and number of days, and where the oracle's came from."""

    world_hash: str
    seed: int
    days: int
    hold: float
    oracle: float
    source: str  # "runs compared", "world manifest" or "computed"

    def score(self, net_assets: float | None) -> float | None:
        """The normalised score of final net assets `net_assets` (None without them or without a span)."""
        return normalised_score(net_assets, self.hold, self.oracle)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "world_hash": self.world_hash,
            "seed": self.seed,
            "days": self.days,
            "hold": round(self.hold, 2),
            "oracle": round(self.oracle, 2),
            "source": self.source,
        }


def normalised_score(net_assets: float | None, hold: float, oracle: float) -> float | None:
    """(net_assets - hold) / (oracle - hold); None when net assets are missing or the oracle does not beat hold."""
    if net_assets is None or not math.isfinite(net_assets) or not oracle > hold:
        return None
    return (float(net_assets) - hold) / (oracle - hold)


def hold_net_assets(world: World, days: int) -> float:
    """HoldAgent's net assets after `days` days: the start cash less the network's daily fee of each day."""
    eco = world.economics
    return round(float(eco.start_cash) - days * float(eco.machine_rent_per_day) * world.n_machines, 2)


def manifest_references(world_dir: str | Path | None) -> dict[int, list[float]]:
    """The oracle's daily net assets by seed from a world bundle's manifest ({} when it has none)."""
    if world_dir is None:
        return {}
    try:
        manifest = json.loads((Path(world_dir) / "manifest.json").read_text(encoding="utf-8"))
        seeds = manifest[REFERENCES_KEY]["oracle"]["daily_net_assets"]
        return {int(seed): [float(x) for x in values] for seed, values in seeds.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def oracle_series(runs: Iterable[tuple[Mapping[str, Any], list[float]]]) -> dict[tuple[str, int], list[float]]:
    """(world hash, seed) -> daily net assets of the oracle runs among `runs` (run.json, daily net assets)."""
    out = {}
    for meta, daily in runs:
        if meta.get("agent_entry_point") == ORACLE_ENTRY_POINT and meta.get("privileged") is True:
            out[(str(meta.get("world_hash") or ""), int(meta.get("seed", 0)))] = list(daily)
    return out


def reference(
    world: World,
    seed: int,
    days: int,
    runs: Mapping[tuple[str, int], list[float]] | None = None,
    world_dir: str | Path | None = None,
) -> Reference | None:
    """The reference of (world, seed, days) from oracle runs given (`oracle_series`) or the world's manifest."""
    hold = hold_net_assets(world, days)
    series = (runs or {}).get((world.world_hash, seed))
    if series is not None and len(series) >= days:
        return Reference(world.world_hash, seed, days, hold, float(series[days - 1]), "runs compared")
    shipped = manifest_references(world_dir).get(seed)
    if shipped is None:  # the run's world_path may be another machine's: the installed world of the same hash
        from autovend.world.catalogue import installed_world

        shipped = manifest_references(installed_world(world.world_hash)).get(seed)
    if shipped is not None and len(shipped) >= days:
        return Reference(world.world_hash, seed, days, hold, float(shipped[days - 1]), "world manifest")
    return None


def run_reference(run: RunData) -> Reference | None:
    """The reference of a run from what is known without running the oracle (the world's manifest; None if none).

    What a run's report shows beside its net assets (report.md; report.html's normalised-score slot).
    """
    if run.days < 1:
        return None
    return reference(run.world, run.seed, run.days, world_dir=run.meta.get("world_path"))


def compute_reference(world: World, seed: int, days: int) -> Reference:
    """Run the oracle for `days` days in memory (no folder, no trajectory) and return the reference."""
    from autovend.agents.harness import HarnessSession, agent_step, settled_days
    from autovend.agents.identity import grant_hidden
    from autovend.agents.oracle import OracleAgent
    from autovend.env.boundary import simulator_of

    agent = OracleAgent(seed=seed)
    grant_hidden(agent, world)
    session = HarnessSession(world, seed=seed)
    try:
        agent_step(agent, session, "start")
        while not session.done and settled_days(session) < days:
            agent_step(agent, session, "act_day")
        oracle = float(simulator_of(session).reports[-1].balance.net_assets)
    finally:
        session.close()
    return Reference(world.world_hash, seed, days, hold_net_assets(world, days), oracle, "computed")

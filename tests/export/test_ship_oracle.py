"""Shipping a world with oracle runs: the README's headroom table and the manifest's references, read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autovend.errors import ExportError
from autovend.evaluation.headroom import manifest_references, reference
from autovend.export.ship import ship_world
from autovend.world.bundle import load_world, read_manifest
from tests.export.test_ship import bundle, fake_run  # noqa: F401  (the module's bundle fixture)

FEE = 80.0  # the daily fee of the fake runs: hold = 40,000 - 180 x 80 = 25,600


ORACLE = "autovend.agents.oracle:OracleAgent"


def fake_oracle_run(
    folder: Path, seed: int, world_hash: str, per_day: float, agent: str = "oracle", entry: str = ORACLE
) -> Path:
    """A finished oracle run as shipping reads it: metrics.json, run.json and daily.csv (net assets, daily fee)."""
    daily = [40000.0 + per_day * d for d in range(1, 181)]
    fake_run(folder, seed, daily[-1], world_hash)
    meta = {"agent": agent, "agent_entry_point": entry, "privileged": entry == ORACLE, "seed": seed}
    meta["start_cash"] = 40000.0
    (folder / "run.json").write_text(json.dumps(meta))
    lines = ["day,net_assets,daily_fee"] + [f"{d},{x:.2f},{FEE}" for d, x in enumerate(daily, start=1)]
    (folder / "daily.csv").write_text("\n".join(lines) + "\n")
    return folder


def test_oracle_runs_add_the_headroom_to_the_readme_and_the_references_to_the_manifest(bundle, tmp_path):  # noqa: F811
    h = read_manifest(bundle)["world_hash"]
    runs = [fake_run(tmp_path / f"b{s}", s, 100000.0 + 1000 * s, h) for s in (1, 2)]
    oracle = [fake_oracle_run(tmp_path / f"o{s}", s, h, 1000.0 + s) for s in (2, 1)]
    out = tmp_path / "worlds" / "tiny20"
    manifest = ship_world(bundle, out, runs=runs, oracle_runs=oracle)
    assert manifest["world_hash"] == h == load_world(out).world_hash  # the world is unchanged
    readme = (out / "README.md").read_text()
    assert "### Headroom: hold and the privileged oracle" in readme and "**privileged**" in readme
    # seed 1: oracle 40,000 + 180 x 1,001 = 220,180; baseline 101,000: (101,000 - 25,600) / (220,180 - 25,600)
    assert "| 1 | 25,600.00 | 101,000.00 | 220,180.00 | 0.388 |" in readme  # 75,400 / 194,580 = 0.38750...
    assert "| 2 | 25,600.00 | 102,000.00 | 220,360.00 | 0.392 |" in readme
    refs = manifest["references"]
    assert refs["hold"]["net_assets"] == 25600.0 and refs["oracle"]["privileged"] is True
    assert refs["oracle"]["net_assets"] == {"1": 220180.0, "2": 220360.0}
    series = manifest_references(out)
    assert sorted(series) == [1, 2] and series[1][29] == 40000.0 + 30 * 1001.0  # day 30
    ref = reference(load_world(out), 1, 30, world_dir=out)  # a 30-day run on seed 1 of the shipped world
    assert ref is not None and ref.source == "world manifest" and ref.oracle == 70030.0
    assert ref.hold == 40000.0 - 30 * load_world(out).n_machines * 4.0  # the world's own fee, not the fake runs'
    # shipping again without oracle runs drops the references
    again = ship_world(out, tmp_path / "again", runs=runs)
    assert "references" not in again and "Headroom" not in (tmp_path / "again" / "README.md").read_text()


def test_a_run_of_another_agent_is_refused_as_an_oracle_run(bundle, tmp_path):  # noqa: F811
    h = read_manifest(bundle)["world_hash"]
    baseline = fake_oracle_run(
        tmp_path / "x", 1, h, 1.0, agent="baseline", entry="autovend.agents.baseline:BaselineAgent"
    )
    with pytest.raises(
        ExportError, match=r"is a run of 'baseline' \(code autovend.agents.baseline:BaselineAgent\), not of the oracle"
    ):
        ship_world(bundle, tmp_path / "a", oracle_runs=[baseline])
    named = fake_oracle_run(tmp_path / "z", 1, h, 1.0, agent="oracle", entry="/tmp/cheat.py:Oracle")  # a name only
    with pytest.raises(ExportError, match=r"is a run of 'oracle' \(code /tmp/cheat.py:Oracle\), not of the oracle"):
        ship_world(bundle, tmp_path / "c", oracle_runs=[named])
    with pytest.raises(ExportError, match="oracle runs repeat a seed"):
        ship_world(bundle, tmp_path / "b", oracle_runs=[fake_oracle_run(tmp_path / f"y{i}", 1, h, 1.0) for i in (1, 2)])


def test_a_run_on_the_shipped_world_reports_its_normalised_score(bundle, tmp_path):  # noqa: F811
    import re

    from autovend.agents.plugins import load_agent
    from autovend.runner import run_episode

    h = read_manifest(bundle)["world_hash"]
    out = tmp_path / "worlds" / "tiny20"
    ship_world(bundle, out, oracle_runs=[fake_oracle_run(tmp_path / "o1", 1, h, 1001.0)])
    world = load_world(out)
    hold = str(Path(__file__).resolve().parents[2] / "examples" / "agents" / "hold.py") + ":HoldAgent"
    run = run_episode(world, load_agent(hold, 1), 1, days=3, out_dir=tmp_path / "run", world_path=out, checkpoint="off")
    fee = 3 * world.n_machines * 4.0
    assert run.final_net_assets == 40000.0 - fee  # the hold policy: (hold - hold) / (oracle - hold) = 0
    report = (tmp_path / "run" / "report.md").read_text()
    assert f"| Normalised score | 0.000 (hold {40000.0 - fee:,.2f}, oracle 43,003.00) |" in report
    page = (tmp_path / "run" / "report.html").read_text()
    slot = re.search(r'id="normalised-score" data-slot="normalised-score">(.*?)</div>', page).group(1)
    assert ">0.000<" in slot and "oracle 43,003.00 CNY" in slot

"""`--scenario` on the doors: `autovend run`, `VendingEnv`, gymnasium, the MCP server's command; a run on a derived
world records how it was made, and `autovend verify` rebuilds that world from the installed base."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autovend.agents.llm.mcp_bridge import serve_command
from autovend.cli import app
from autovend.env import VendingEnv
from autovend.evaluation.verify import verify_run
from autovend.world.bundle import load_world
from autovend.world.derive import apply_scenario
from autovend.world.runcopy import identity_hash

ROOT = Path(__file__).resolve().parents[2]
HOLD = "autovend.agents.hold:HoldAgent"


def test_run_with_a_scenario_records_the_derivation_and_verify_rebuilds_the_world(tmp_path):
    out = tmp_path / "run"
    args = ["run", "--world", "cn20", "--scenario", "fee-rise", "--days", "3", "--agent", HOLD, "--no-report"]
    res = CliRunner().invoke(app, [*args, "--out", str(out), "--checkpoint", "off"])
    assert res.exit_code == 0, res.output
    meta = json.loads((out / "run.json").read_text())
    want = apply_scenario(load_world(ROOT / "worlds" / "cn20"), "fee-rise")
    assert meta["world_name"] == "cn20+fee-rise" and meta["world_hash"] == identity_hash(want)
    assert meta["world_path"] is None and (out / "world" / "manifest.json").is_file()
    assert meta["derivation"]["base_world_hash"] == load_world(ROOT / "worlds" / "cn20").world_hash
    assert meta["derivation"]["scenario"]["name"] == "fee-rise"
    # the fixed fee of the derived world: 20 machines x 6 a day
    assert meta["final_net_assets"] == pytest.approx(40_000 - 3 * 120)
    result = verify_run(out)
    assert result.ok and any("changed by scenario fee-rise" in n for n in result.notes)


def test_a_run_whose_recorded_scenario_gives_another_hash_is_not_verified(tmp_path):
    out = tmp_path / "run"
    args = ["run", "--world", "cn20", "--scenario", "fee-rise", "--days", "2", "--agent", HOLD, "--no-report"]
    assert CliRunner().invoke(app, [*args, "--out", str(out), "--checkpoint", "off"]).exit_code == 0
    meta = json.loads((out / "run.json").read_text())
    meta["derivation"]["scenario"]["changes"]["fees"]["visit_fee"] = 61.0  # a forged derivation
    (out / "run.json").write_text(json.dumps(meta))
    from autovend.errors import AutoVendError

    with pytest.raises(AutoVendError) as err:
        verify_run(out)
    assert "is not installed" in str(err.value)


def test_vending_env_and_gymnasium_take_a_scenario():
    env = VendingEnv("cn20", scenario="express-supplier", days=2)
    try:
        env.reset(seed=1)
        assert [s["supplier_id"] for s in env.call("get_catalog", {}).content["suppliers"]] == ["default", "express"]
    finally:
        env.close()
    gymnasium = pytest.importorskip("gymnasium")
    import autovend.gym  # noqa: F401

    g = gymnasium.make("AutoVend-v0", world="cn20", scenario="supplier-outage", days=60)
    try:
        g.reset(seed=1)
        for _ in range(49):
            obs, *_ = g.step('{"end_day": true}')
        report = json.loads(obs["text"])
        assert report["day"] == 50 and "delivers nothing" in report["report"]["notices"][0]
    finally:
        g.close()


def test_the_mcp_server_command_carries_the_scenario():
    cmd = shlex.split(serve_command("cn20", 3, python="py", scenario="heatwave"))
    assert cmd[-2:] == ["--scenario", "heatwave"] and cmd[:3] == ["py", "-m", "autovend.cli"]
    assert "--scenario" not in serve_command("cn20", 3, python="py")
    res = CliRunner().invoke(app, ["serve", "--toy", "3x12", "--scenario", "heatwave"])
    assert res.exit_code != 0 and "--scenario changes a world bundle" in str(res.exception or res.output)

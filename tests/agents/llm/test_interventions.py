"""The two interventions of `autovend.agents.llm.interventions` on the scripted OpenAI-compatible server: what the
model is shown, the harness tool, resume, and the paired comparison with the same model without them."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from autovend.agents.llm.interventions import POLICY_LIMIT, POLICY_TOOL, InterventionAgent
from autovend.cli import app
from autovend.evaluation.verify import verify_run
from autovend.runner import run_episode
from autovend.tools.trajectory import read_trajectory
from tests.agents.llm.conftest import SEED, make_agent, make_world, play
from tests.agents.llm.fake_openai import Call, FakeOpenAI, Reply, Request

MACHINE, SKU = "CN_WORKSITE_01", "SKU0001"
ORDERED = 30


def grounded_script(req: Request) -> Reply:
    """Day 1 orders 30 units. On later workdays the model restocks: with a verified state in its prompt, exactly
    the units the warehouse holds; without, 50 (more than there are: refused, as ungrounded agents do)."""
    if req.day == 1:
        if req.turn == 1:
            return Reply((Call("place_order", {"items": [{"sku_id": SKU, "qty": ORDERED}]}),))
        return Reply((Call("end_day"),))
    if req.turn == 1 and req.is_workday:
        qty = 50
        if "[Verified state" in req.prompt:
            state = json.loads(
                req.prompt.split("[Verified state, read by the harness before you act]\n", 1)[1].split("\n")[0]
            )
            have = {w["sku_id"]: w["units"] - w["expired_units"] for w in state["warehouse"]}
            qty = have.get(SKU, 0)
        if qty > 0:
            return Reply((Call("restock", {"items": [{"device_id": MACHINE, "sku_id": SKU, "qty": qty}]}),))
    return Reply((Call("end_day"),))


def policy_script(req: Request) -> Reply:
    """Day 1 sets a policy, then tries two bad updates; day 2 reads it back from its prompt and ends."""
    if req.day == 1 and req.turn == 1:
        return Reply(
            (
                Call(POLICY_TOOL, {"text": "Restock on workdays only; keep 5 facings."}),
                Call(POLICY_TOOL, {"text": "x" * (POLICY_LIMIT + 1)}),
                Call(POLICY_TOOL, {"text": "ok", "extra": 1}),
            )
        )
    return Reply((Call("end_day"),))


def test_verify_state_shows_the_feasible_state_and_grounds_the_restock(tmp_path, prices_file):
    with FakeOpenAI(grounded_script) as server:
        agent = make_agent(server.base_url, prices_file, interventions=("verify-state",))
        assert isinstance(agent, InterventionAgent)
        summary = run_episode(make_world(), agent, SEED, out_dir=tmp_path / "run", checkpoint="sync")
        prompts = [m["content"] for b in server.requests for m in b["messages"][-1:] if m["role"] == "user"]
    assert summary.days == 8
    assert all("[Verified state" in p for p in prompts if "Day " in p)
    assert "Verified state: each daily prompt starts" in server.requests[0]["messages"][0]["content"]
    calls = [r for r in read_trajectory(tmp_path / "run" / "trajectory.jsonl") if r["kind"] == "call"]
    day2 = [c["tool"] for c in calls if c["day"] == 2]
    # the harness reads the warehouse and the 3 machines before the model's first call
    assert day2[:4] == ["get_warehouse", "get_device_detail", "get_device_detail", "get_device_detail"]
    restocks = [c for c in calls if c["tool"] == "restock"]
    assert restocks and all(c["ok"] and not c["result"]["rejected"] for c in restocks)
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert meta["agent_config"]["interventions"] == ["verify-state"]
    shutil.copytree(tmp_path / "run" / "world", tmp_path / "world")  # the toy world, kept outside the run
    assert verify_run(tmp_path / "run", tmp_path / "world").ok  # the harness's reads replay like any call


def test_policy_notes_keeps_the_policy_shows_it_each_day_and_survives_a_resume(tmp_path, prices_file):
    world = make_world(3)
    with FakeOpenAI(policy_script) as server:
        make = lambda: make_agent(server.base_url, prices_file, interventions=("policy-notes",))  # noqa: E731
        play(world, make, tmp_path / "a", stop_after=1)
        _, agent = play(world, make, tmp_path / "a", resume=True)
        bodies = list(server.requests)
    assert isinstance(agent, InterventionAgent) and agent.policy == "Restock on workdays only; keep 5 facings."
    assert any(t["function"]["name"] == POLICY_TOOL for t in bodies[0]["tools"])
    day1_results = [m["content"] for m in bodies[1]["messages"] if m["role"] == "tool"]
    assert json.loads(day1_results[0]) == {"ok": True, "policy_chars": 41}
    assert f"at most {POLICY_LIMIT:,} characters" in json.loads(day1_results[1])["error"]
    assert "error" in json.loads(day1_results[2])
    day2 = [m["content"] for b in bodies for m in b["messages"] if m["role"] == "user" and "Day 2 of 3" in m["content"]]
    assert day2 and day2[0].startswith("[Your standing policy]\nRestock on workdays only; keep 5 facings.")
    calls = [r for r in read_trajectory(tmp_path / "a" / "trajectory.jsonl") if r["kind"] == "call"]
    assert POLICY_TOOL not in {c["tool"] for c in calls}  # the harness answers it; the simulator never sees it


def test_an_agent_without_interventions_records_the_config_it_always_did(prices_file):
    with FakeOpenAI() as server:
        plain = make_agent(server.base_url, prices_file)
    assert type(plain).__name__ == "LLMAgent" and "interventions" not in plain.config.model_dump(mode="json")


@pytest.mark.slow  # six episodes and a comparison: about 20 s
def test_with_and_without_verify_state_are_compared_with_paired_statistics(tmp_path, prices_file):
    folders = []
    with FakeOpenAI(grounded_script) as server:
        for seed in (1, 2, 3):
            for extra in ((), ("verify-state",)):
                agent = make_agent(server.base_url, prices_file, interventions=extra)
                out = tmp_path / f"{'verified' if extra else 'plain'}-s{seed}"
                run_episode(make_world(), agent, seed, out_dir=out, checkpoint="off")
                folders.append(out)
    res = CliRunner().invoke(app, ["compare", *map(str, folders), "--out", str(tmp_path / "cmp"), "--no-references"])
    assert res.exit_code == 0, res.output
    comparison = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    (pair,) = [p for p in comparison["paired"] if p["metric"] == "net_assets"]
    assert pair["n_seeds"] == 3 and pair["seeds"] == [1, 2, 3] and pair["ci_low"] is not None
    net = {f.name: json.loads((f / "run.json").read_text())["final_net_assets"] for f in folders}
    per_seed = [net[f"verified-s{s}"] - net[f"plain-s{s}"] for s in (1, 2, 3)]
    sign = 1 if "verify-state" in pair["a"] else -1
    assert sign * pair["mean_difference"] == pytest.approx(sum(per_seed) / 3, abs=0.01)
    # what the intervention changed: the plain runs' restocks ask for more than the warehouse holds and are refused
    for f in folders:
        restocks = [
            r for r in read_trajectory(f / "trajectory.jsonl") if r["kind"] == "call" and r["tool"] == "restock"
        ]
        rejected = sum(len(r["result"]["rejected"]) for r in restocks)
        assert (rejected == 0) == f.name.startswith("verified"), f.name


@pytest.mark.parametrize("bad", ["verify_state", "memory"])
def test_an_unknown_intervention_is_refused_in_words(bad):
    res = CliRunner().invoke(app, ["run", "--agent", "openai:x", "--intervention", bad, "--days", "1"])
    assert res.exit_code != 0 and "is none of verify-state, policy-notes" in str(res.exception)
    res = CliRunner().invoke(app, ["run", "--agent", "baseline", "--intervention", "verify-state", "--days", "1"])
    assert "--intervention is for openai:MODEL agents" in str(res.exception)

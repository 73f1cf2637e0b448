"""Tampered run folders fail `autovend verify`, which names what differs: runs of `autovend run`, MCP and the console.

The generator (tamper.py) changes a copy of a finished run once per class of tampering; verify must fail on each
and name the file (and the field) that differs. A small run made by `autovend run` (3 machines, 12 products,
6 days) takes every class in the fast suite; the runs the doors fixture makes over MCP (stdio and HTTP), in the web
console and by the LLM agent (tokens and cost against its transcript) take them too (slow: the fixture plays seven
runs). An oracle run relabelled as another agent, and runs that claim to be the oracle's, fail as well; a call
removed with the calls after it renumbered fails for an agent verify can run again (the baseline), and cannot fail
for one it cannot (see docs/agents.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autovend.evaluation.verify import Difference, Verification, verify_run
from autovend.world.bundle import make_manifest, world_files, write_bundle
from autovend.world.model import Economics
from autovend.world.toy import toy_world
from tests.evaluation.verify.doors import cli
from tests.evaluation.verify.tamper import TAMPERS, Tamper, tampered

EXPECTED_FIELD = {"claims-the-oracle": ("trajectory.jsonl", "the call"), "metrics-edited": ("metrics.json", "waste")}


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> dict[str, Path]:
    """A 6-day baseline run and a 6-day oracle run by `autovend run` on a 3-machine toy bundle."""
    world = toy_world(3, 12, seed=0, economics=Economics(horizon_days=8))
    files = world_files(world)
    files["README.md"] = b"# toy world for the tamper tests\n"
    base = tmp_path_factory.mktemp("tamper")
    write_bundle(base / "toy3", files, make_manifest(world, files, "toy", "toy", {}))
    runs = {}
    for agent in ("baseline", "oracle"):
        runs[agent] = base / agent
        args = ["run", "--world", str(base / "toy3"), "--agent", agent, "--days", "6", "--out", str(runs[agent])]
        result = cli(*args)
        assert result.exit_code == 0, result.output
    return runs


def _check(tamper: Tamper, result: Verification) -> Difference:
    diff = result.difference
    assert not result.ok and diff is not None, tamper.name
    where, field = EXPECTED_FIELD.get(tamper.name, (tamper.where, tamper.field))
    assert diff.where == where and diff.field.startswith(field), (tamper.name, diff.message())
    assert diff.message().startswith(where), (tamper.name, diff.message())
    return diff


def test_the_untouched_runs_verify(small):
    for run in small.values():
        result = verify_run(run)
        assert result.ok, result.difference


@pytest.mark.parametrize("tamper", TAMPERS, ids=[t.name for t in TAMPERS])
def test_every_tampering_of_a_run_fails_and_names_what_differs(small, tmp_path, tamper):
    ((_, run),) = tampered(small["baseline"], tmp_path, (tamper,))
    _check(tamper, verify_run(run))


def test_the_command_names_the_difference_in_words_with_exit_1(small, tmp_path):
    chosen = tuple(t for t in TAMPERS if t.name in ("seed-abc", "line-is-a-list", "records-missing"))
    for tamper, run in tampered(small["baseline"], tmp_path, chosen):
        result = cli("verify", str(run))
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (tamper.name, result.output)
        assert f"first difference: {tamper.where}" in result.output, result.output
    assert "line 3: JSON: a JSON list, not an object" in cli("verify", str(tmp_path / "line-is-a-list")).output


def test_rows_deleted_or_tripled_name_the_table_row_and_column(small, tmp_path):
    by_name = {t.name: t for t in TAMPERS}
    names = ("records-row-deleted", "records-units-tripled", "hidden-row-deleted", "hidden-demand-tripled")
    found = {t.name: verify_run(run).difference for t, run in tampered(small["baseline"], tmp_path, tuple(by_name[n]
                                                                                                        for n in names))}  # fmt: skip
    deleted = found["records-row-deleted"]
    assert deleted is not None and (deleted.table, deleted.row) == ("daily_costs", 2)
    assert "rows recorded" in str(deleted.why) and "replayed: a row deleted or added before here" in str(deleted.why)
    tripled = found["records-units-tripled"]
    assert tripled is not None and tripled.table == "daily_sales" and tripled.recorded == 3 * tripled.replayed
    assert tripled.field.startswith("units (row day=")
    hidden = found["hidden-demand-tripled"]
    assert hidden is not None and hidden.table == "demand" and hidden.recorded == 3 * hidden.replayed
    assert found["hidden-row-deleted"] is not None and found["hidden-row-deleted"].row == 2


def test_an_oracle_run_relabelled_as_another_agent_fails(small, tmp_path):
    def relabel(name: str, **changes: object) -> Difference | None:
        run = tmp_path / name
        shutil.copytree(small["oracle"], run)
        meta = json.loads((run / "run.json").read_text())
        meta.pop("privileged")
        meta.update(changes)
        (run / "run.json").write_text(json.dumps(meta, indent=2))
        return verify_run(run).difference

    # the name changed and `privileged` removed: its entry point is still the oracle's
    diff = relabel("renamed", agent="my-agent")
    assert diff is not None and (diff.where, diff.field, diff.recorded, diff.replayed) == ("run.json", "privileged",
                                                                                           False, True)  # fmt: skip
    # the entry point changed too, to the baseline's: the baseline run again makes other calls
    baseline = json.loads((small["baseline"] / "run.json").read_text())
    changes = {"agent_entry_point": baseline["agent_entry_point"], "agent_config": baseline["agent_config"]}
    diff = relabel("as-baseline", agent="baseline", **changes)
    assert diff is not None and (diff.where, diff.field) == ("trajectory.jsonl", "the call")
    assert "BaselineAgent agent calls" in str(diff.why)
    # or to hold's (no settings): hold run again makes other calls
    diff = relabel("as-hold", agent="hold", agent_entry_point="autovend.agents.hold:HoldAgent")
    assert diff is not None and (diff.where, diff.field) == ("trajectory.jsonl", "the call")


def test_a_call_removed_and_the_rest_renumbered_fails_for_an_agent_run_again(small, tmp_path):
    run = tmp_path / "renumbered"
    shutil.copytree(small["baseline"], run)
    lines = (run / "trajectory.jsonl").read_text().splitlines()
    i = next(i for i, line in enumerate(lines) if '"tool":"get_warehouse"' in line)
    kept = [*lines[:i], *lines[i + 1 :]]
    for n in range(i, len(kept)):
        rec = json.loads(kept[n])
        rec["seq"] = n
        kept[n] = json.dumps(rec, ensure_ascii=False, separators=(",", ":"))
    (run / "trajectory.jsonl").write_text("\n".join(kept) + "\n")
    meta = json.loads((run / "run.json").read_text())
    meta["tool_calls"]["seq"] -= 1
    meta["tool_calls"]["by_tool"]["get_warehouse"] -= 1
    (run / "run.json").write_text(json.dumps(meta, indent=2))
    diff = verify_run(run).difference
    assert diff is not None and (diff.where, diff.field, diff.line) == ("trajectory.jsonl", "the call", i + 1)


def test_a_run_saved_without_its_report_on_purpose_verifies_and_one_that_lost_it_does_not(small, tmp_path):
    run = tmp_path / "no-report"
    result = cli("run", "--world", str(small["baseline"].parent / "toy3"), "--days", "2", "--out", str(run),
                 "--no-report")  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads((run / "run.json").read_text())["evaluated"] is False
    verified = verify_run(run)
    assert verified.ok and any("evaluated: false" in note for note in verified.notes)
    meta = json.loads((run / "run.json").read_text())
    meta["evaluated"] = True  # says it was scored, but there is no metrics.json
    (run / "run.json").write_text(json.dumps(meta, indent=2))
    diff = verify_run(run).difference
    assert diff is not None and (diff.where, diff.field) == ("metrics.json", "file")


@pytest.mark.slow  # the doors fixture plays seven runs (about 20 s); then 25 tampers on each of four runs
@pytest.mark.parametrize("door", ["mcp", "http", "console", "llm"])
def test_every_tampering_of_an_mcp_console_or_llm_run_fails(doors, tmp_path, door):
    for tamper, run in tampered(doors[door], tmp_path):
        _check(tamper, verify_run(run))


def test_a_baseline_run_with_another_config_fails_where_the_baseline_would_act_otherwise(small, tmp_path):
    for name, value, where, field in (("order-lot", 12, "trajectory.jsonl", "the call"), ("junk", "x", "run.json", "")):
        run = tmp_path / name
        shutil.copytree(small["baseline"], run)
        meta = json.loads((run / "run.json").read_text())
        meta["agent_config"]["order_lot"] = value
        (run / "run.json").write_text(json.dumps(meta, indent=2))
        diff = verify_run(run).difference
        assert diff is not None and (diff.where, diff.field) == (where, field or "agent_config"), diff
    assert "agent_config.order_lot: Input should be a valid integer" in str(diff.why)  # in words, no pydantic dump

"""Every field of every trajectory line is compared with the record: refused calls, their error text, and siblings.

A 2-day run of an agent that makes refused calls (an unknown product, an unknown tool, a negative quantity,
arguments too large to record, a tool name too long to record) is saved by the runner; then one field of one line is changed. Verify must fail
naming that line and that field, the error text of a refused call included (the planted bug of issue [R2]: the
error taken from the replayed result instead of the recorded line let an edited message through).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from autovend.evaluation.verify import verify_run
from autovend.runner import run_episode
from autovend.world.bundle import load_world, make_manifest, world_files, write_bundle
from autovend.world.model import Economics
from autovend.world.toy import toy_world

HUGE = "x" * 140_000  # over the 131,072 characters a call's arguments may take: refused, and not recorded


class Refuser:
    """Makes one good call and five refused ones a day, then ends the day."""

    name = "refuser"

    def start(self, session: Any) -> None:
        pass

    def act_day(self, session: Any) -> None:
        session.call("get_warehouse", {})
        session.call("place_order", {"items": [{"sku_id": "NO_SUCH_SKU", "qty": 5}]})
        session.call("no_such_tool", {})
        session.call("place_order", {"items": [{"sku_id": "SKU0001", "qty": -1}]})
        session.call("write_memory", {"text": HUGE})
        session.call("y" * 1000, {})  # an unknown tool whose name is too long to record whole
        session.call("end_day", {})

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        pass


@pytest.fixture(scope="module")
def refused(tmp_path_factory) -> Path:
    world = toy_world(3, 12, seed=0, economics=Economics(horizon_days=4))
    files = world_files(world)
    files["README.md"] = b"# toy world\n"
    base = tmp_path_factory.mktemp("lines")
    write_bundle(base / "toy3", files, make_manifest(world, files, "toy", "toy", {}))
    run = base / "run"
    run_episode(load_world(base / "toy3"), Refuser(), 1, days=2, out_dir=run, world_path=base / "toy3")
    return run


def _lines(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "trajectory.jsonl").read_text().splitlines()]


def _write(run: Path, records: list[dict[str, Any]]) -> None:
    text = "\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records)
    (run / "trajectory.jsonl").write_text(text + "\n")


def test_the_run_holds_refused_calls_and_verifies(refused):
    records = _lines(refused)[1:]
    assert [r["ok"] for r in records[:7]] == [True, True, False, False, False, False, True]
    assert records[4]["arguments"].startswith("<not recorded: ")
    assert records[5]["tool"] == "y" * 200 + "... (1,000 characters)"  # called again as 1,000 characters
    result = verify_run(refused)
    assert result.ok, result.difference
    assert any("2 refused calls had arguments too large to record" in note for note in result.notes)


# (line, the field changed, its new value, the field verify names): line 2 is a good get_warehouse, line 3 a
# place_order of an unknown product (answered, the item rejected), line 4 an unknown tool, line 5 a place_order
# refused whole (a negative quantity), line 6 a write_memory refused for arguments too large to record
EDITS = [
    (5, "error", "place_order: something else went wrong", "error"),  # the record's error only: the planted bug
    (5, "result.error", "place_order: something else went wrong", "result.error"),
    (5, "ok", True, "ok"),
    (5, "day", 2, "day"),
    (5, "tool", "adjust_price", "result.error"),
    (4, "error", "there is no tool 'no_such_tool'", "error"),
    (4, "tool", "no_such_tool_at_all", "result.error"),
    (3, "arguments.items.0.qty", 6, "result.rejected[0].item.qty"),  # the answer echoes the arguments
    (2, "result.day", 2, "result.day"),
    (6, "error", "write_memory: refused, nothing was done: the text is too long", "error"),  # not recorded
    (6, "result.error", "write_memory: refused", "result.error"),
    (6, "ok", True, "ok"),
]


def _set(rec: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    node: Any = rec
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[int(last) if isinstance(node, list) else last] = value


@pytest.mark.parametrize(("line", "field", "value", "named"), EDITS, ids=[f"line{e[0]}-{e[1]}" for e in EDITS])
def test_each_field_of_a_line_is_compared_with_the_record(refused, tmp_path, line, field, value, named):
    run = tmp_path / "run"
    shutil.copytree(refused, run)
    records = _lines(run)
    _set(records[line - 1], field, value)
    _write(run, records)
    diff = verify_run(run).difference
    assert diff is not None and (diff.where, diff.line, diff.field) == ("trajectory.jsonl", line, named), diff


def test_a_line_written_otherwise_with_the_same_values_fails(refused, tmp_path):
    run = tmp_path / "spaced"
    shutil.copytree(refused, run)
    lines = (run / "trajectory.jsonl").read_text().splitlines()
    lines[4] = lines[4].replace('"ok":false,', '"ok": false,')  # a space: the same values, not AutoVend's text
    (run / "trajectory.jsonl").write_text("\n".join(lines) + "\n")
    diff = verify_run(run).difference
    assert diff is not None and (diff.line, diff.field) == (5, "text"), diff
    assert "not written as AutoVend writes one" in str(diff.why)
    lines[4] = lines[4].replace('"ok": false,', '"ok":false,"ok":false,')  # a key twice
    (run / "trajectory.jsonl").write_text("\n".join(lines) + "\n")
    diff = verify_run(run).difference
    assert diff is not None and (diff.line, diff.field) == (5, "JSON") and "'ok' is given twice" in str(diff.why)


def test_a_number_within_1e_9_relative_passes_with_a_note_and_one_beyond_fails(refused, tmp_path):
    run = tmp_path / "close"
    shutil.copytree(refused, run)
    records = _lines(run)
    end = next(r for r in records if r.get("tool") == "end_day")
    end["result"]["settled"]["net"] *= 1 + 1e-12  # another CPU's last digits
    _write(run, records)
    result = verify_run(run)
    assert result.ok, result.difference
    assert any("trajectory lines equal to 1e-9 relative" in note for note in result.notes)
    end["result"]["settled"]["net"] *= 1 + 1e-6
    _write(run, records)
    diff = verify_run(run).difference
    assert diff is not None and diff.field == "result.settled.net", diff

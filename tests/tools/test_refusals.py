"""Refused calls carry a code: over MCP their structured content is `{"error", "code"}` and matches the published
`REFUSAL_SCHEMA` (the schema in docs/mcp-clients.md is that one); the last end_day of a scored run of fewer days than
the world's horizon answers `done` with where the scored run is."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import jsonschema
import pytest
from mcp.client import Client

from autovend.mcp.play import ScoredPlay
from autovend.mcp.server import build_server
from autovend.runner import TRAJECTORY_FILE
from autovend.tools.errors import REFUSAL_CODES, REFUSAL_SCHEMA, ToolError
from autovend.tools.registry import TOOLS_BY_NAME
from autovend.tools.trajectory import read_trajectory

ROOT = Path(__file__).resolve().parents[2]
DEEP: object = 1
for _ in range(40):
    DEEP = [DEEP]
CASES = [
    ("nonexistent", None, "unknown_tool"),
    ("read_memory", {"x": 1}, "invalid_arguments"),
    ("get_catalog", {"price_min": -1}, "invalid_arguments"),
    ("get_catalog", {"query": DEEP}, "input_limit"),
    ("get_device_detail", {"device_id": "NOPE"}, "not_found"),
    ("get_sku_across_devices", {"sku_id": "NOPE"}, "not_found"),
    ("get_categories", {"category_l1": "tools"}, "not_found"),
    ("query_sql", {"sql": "DELETE FROM orders"}, "refused"),
    ("write_memory", {"text": "x" * 6001}, "refused"),
]


def test_refused_calls_over_mcp_carry_a_code_in_the_published_schema(world):
    app = build_server(world, seed=1)

    async def run():
        async with Client(app.server) as c:
            return [await c.call_tool(name, args) for name, args, _ in CASES]

    results = anyio.run(run)
    jsonschema.Draft202012Validator.check_schema(REFUSAL_SCHEMA)
    for (name, _, code), res in zip(CASES, results, strict=True):
        assert res.is_error, name
        jsonschema.validate(res.structured_content, REFUSAL_SCHEMA)
        assert res.structured_content == {"error": res.content[0].text, "code": code}, name
    in_process = app.session.call("get_device_detail", {"device_id": "NOPE"})
    assert in_process.content == {"error": in_process.error} and in_process.code == "not_found"  # texts unchanged
    app.close()


def test_after_the_last_day_calls_are_episode_over(short_world):
    app = build_server(short_world, seed=1)

    async def run():
        async with Client(app.server) as c:
            ends = [await c.call_tool("end_day", {}) for _ in range(4)]
            return ends, await c.call_tool("get_weather", {})

    ends, after = anyio.run(run)
    assert ends[-1].structured_content["done"] is True
    assert after.is_error and after.structured_content["code"] == "episode_over"
    app.close()


def test_every_code_is_documented_and_the_published_schema_is_this_one():
    doc = (ROOT / "docs" / "mcp-clients.md").read_text(encoding="utf-8")
    block = re.search(r"```json\n(\{\n  \"\$schema\".*?\n\})\n```", doc, re.S)
    assert block is not None, "docs/mcp-clients.md has no refusal schema block"
    assert json.loads(block.group(1)) == REFUSAL_SCHEMA
    for code in REFUSAL_CODES:
        assert f"| `{code}` |" in doc, code
    with pytest.raises(ValueError, match="unknown refusal code"):
        ToolError("x", "made_up")


def test_the_last_end_day_of_a_shorter_scored_run_says_done_and_where_the_run_is(world, tmp_path):
    play = ScoredPlay(world, 1, tmp_path / "run", days=3)  # the world has 40 days
    ends = [play.call("end_day", {}) for _ in range(3)]
    assert [e.content["done"] for e in ends] == [False, False, True]
    last = ends[-1]
    assert "next_day" not in last.content and "observation" not in last.content  # no "Day 4 of 40"
    assert last.content["final"]["net_assets"] == play.summary.final_net_assets
    assert f"{tmp_path / 'run' / 'metrics.json'}" in last.content["message"] and "3 days" in last.content["message"]
    assert last.model is TOOLS_BY_NAME["end_day"].result and last.data is not None  # the end_day schema holds
    assert (tmp_path / "run" / "metrics.json").exists()
    after = play.call("get_weather", {})
    assert after.code == "episode_over" and "The episode is over" in after.error
    play.close()
    recorded = [r for r in read_trajectory(tmp_path / "run" / TRAJECTORY_FILE) if r.get("tool") == "end_day"]
    assert recorded[-1]["result"]["done"] is False  # the run folder keeps the session's answer, as in process

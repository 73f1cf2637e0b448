"""build_server in process (the SDK's in-memory client): bad input never stops the server; worlds from paths."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError

from autovend.env import VendingEnv
from autovend.env.boundary import simulator_of
from autovend.errors import BundleError
from autovend.mcp.server import HTTP_HOST, ExtraTool, build_server, load_world

HOSTILE_ARGS = [
    ("place_order", {"items": [{"sku_id": "SKU0001", "qty": 1e308}]}),
    ("place_order", {"items": [[1, 2, 3]]}),
    ("adjust_price", {"items": [{"device_id": "CN_WORKSITE_01", "sku_id": "SKU0001", "price": None}]}),
    ("get_catalog", {"query": {"$ne": 1}}),
    ("get_catalog", {"price_min": -1}),
    ("query_sql", {"sql": "SELECT * FROM orders WHERE 1 = (SELECT 1 FROM"}),
    ("write_memory", {"text": "é" * 6001}),
    ("get_sku_across_devices", {"sku_id": None}),
    ("end_day", {"force": True}),
    ("read_memory", {"x": 1}),
    ("nonexistent", None),
]


def test_bad_input_returns_error_results_and_the_server_lives(world, tmp_path):
    app = build_server(world, seed=1, trajectory_path=tmp_path / "t.jsonl")

    async def run():
        async with Client(app.server) as c:
            results = [await c.call_tool(name, args) for name, args in HOSTILE_ARGS]
            after = await c.call_tool("get_weather", {})
            return results, after

    results, after = anyio.run(run)
    for (name, _), res in zip(HOSTILE_ARGS, results, strict=True):
        assert res.is_error, name
        text = res.content[0].text
        assert text and "Error executing tool" not in text
        assert name in text or "there is no tool" in text
    assert not after.is_error and json.loads(after.content[0].text)["day"] == 1
    assert app.session.day == 1 and simulator_of(app.session).cash == 40_000 - 12
    app.close()


def test_extra_tools_are_served_beside_the_18(world):
    app = build_server(world, seed=1, extra_tools=[ExtraTool("ping", "Return {} at once.", lambda _: {})])

    async def run():
        async with Client(app.server) as c:
            tools = await c.list_tools()
            return tools.tools, await c.call_tool("ping", {})

    tools, ping = anyio.run(run)
    names = [t.name for t in tools]
    assert len(names) == 19 and names[-1] == "ping"
    served = {t["name"]: t for t in VendingEnv(world).tools()}  # the schemas with the world's currency
    assert all(t.output_schema == served[t.name]["output_schema"] for t in tools[:18])
    assert tools[-1].output_schema is None and ping.structured_content is None
    assert json.loads(ping.content[0].text) == {}
    assert app.session.counters["seq"] == 0  # not logged as an agent call
    app.close()


def test_worlds_from_paths(tmp_path):
    with pytest.raises(BundleError, match="does not exist"):
        build_server(tmp_path / "nowhere", seed=1)
    (tmp_path / "empty").mkdir()
    with pytest.raises(BundleError):
        load_world(tmp_path / "empty")
    assert HTTP_HOST == "127.0.0.1"


def test_a_shipped_world_by_name_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_world("cn20").n_machines == 20


def test_a_repeated_read_is_answered_from_the_kept_answer_until_the_state_changes(world, tmp_path):
    app = build_server(world, seed=1, trajectory_path=tmp_path / "t.jsonl")
    device = simulator_of(app.session).device_ids[0]
    args = {"device_id": device, "window_days": 7}
    price = {"items": [{"device_id": device, "sku_id": "SKU0001", "price": 3.3}]}  # reference price 3.00

    async def run():
        async with Client(app.server) as c:
            first = await c.call_tool("get_device_detail", args)
            again = await c.call_tool("get_device_detail", args)
            changed = await c.call_tool("adjust_price", price)
            after = await c.call_tool("get_device_detail", args)
            return first, again, changed, after

    first, again, changed, after = anyio.run(run)
    assert not first.is_error and not again.is_error and not after.is_error
    assert changed.structured_content["n_accepted"] == 1
    assert again.content[0].text == first.content[0].text
    assert again.structured_content == first.structured_content == json.loads(first.content[0].text)
    assert first.structured_content["other_prices"]["rows"] == []
    assert after.structured_content["other_prices"]["rows"] == [["SKU0001", 3.3, 3.0]]
    assert json.loads(after.content[0].text) == after.structured_content
    assert app.session.counters["by_tool"] == {"get_device_detail": 3, "adjust_price": 1}
    app.close()


def test_an_unknown_prompt_of_a_million_characters_is_named_briefly(world):
    app = build_server(world, seed=1)

    async def run():
        async with Client(app.server) as c:
            with pytest.raises(MCPError) as caught:
                await c.get_prompt("p" * 1_000_000)
            return caught.value

    error = anyio.run(run)
    app.close()
    assert str(error).startswith(f"unknown prompt '{'p' * 60}...' (1,000,000 characters); the prompts are: system")
    assert len(str(error)) < 200

"""The MCP server driven by the SDK's real client over stdio (`python -m autovend.cli serve --toy ...`).

One server process plays a short episode (order, wait for the delivery, restock on a workday,
price, end days to the last one); the same calls are replayed in process on a `ToolSession` of
the same world and seed, and every MCP result must equal the in-process one (the simulator is
deterministic), which ties each result to the simulator's state.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from jsonschema import Draft202012Validator
from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp_types.version import LATEST_HANDSHAKE_VERSION

from autovend.env.boundary import simulator_of
from autovend.session import ToolSession
from autovend.tools.errors import REFUSAL_SCHEMA
from autovend.tools.registry import TOOLS_BY_NAME
from autovend.tools.trajectory import read_trajectory
from autovend.world.model import Economics
from autovend.world.toy import toy_world

ROOT = Path(__file__).resolve().parents[2]
SEED, DAYS = 1, 12
D0, D1 = "CN_WORKSITE_01", "CN_CAMPUS_01"


def _world():
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=DAYS))


SERVE = ["-m", "autovend.cli", "serve", "--toy", "3x12", "--days", str(DAYS), "--seed", str(SEED)]


async def _play(trajectory: Path) -> dict[str, Any]:
    """The whole stdio session; returns what the tests check."""
    params = StdioServerParameters(
        command=sys.executable, args=[*SERVE, "--trajectory", str(trajectory)], cwd=str(ROOT)
    )
    out: dict[str, Any] = {"calls": [], "structured": []}

    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        init = await s.initialize()
        out["instructions"] = init.instructions
        out["server"] = init.server_info.name if init.server_info else None
        out["tools"] = (await s.list_tools()).tools
        out["prompts"] = [p.name for p in (await s.list_prompts()).prompts]
        out["daily_1"] = (await s.get_prompt("daily")).messages[0].content.text

        async def call(name: str, args: Any) -> Any:
            res = await s.call_tool(name, args)
            text = res.content[0].text
            out["calls"].append((name, args, res.is_error, text))
            out["structured"].append(res.structured_content)
            return None if res.is_error else json.loads(text)

        await call("place_order", {"items": [{"sku_id": "SKU0001", "qty": 40}, {"sku_id": "SKU0002", "qty": 30}]})
        await call("place_order", {"items": [{"sku_id": "SKU0001", "qty": 0}]})  # malformed
        await call("place_order", {"items": "SKU0001"})  # malformed
        await call("restock", {"items": [{"device_id": D0, "sku_id": "SKU0001", "qty": 5}]})  # holiday, empty
        await call("sell_everything", {})  # no such tool
        await call("get_device_detail", {"device_id": D0, "window_days": 14})  # bad window
        while True:  # wait for both deliveries and a workday
            wh = await call("get_warehouse", {})
            units = {r[0]: r[2] for r in wh["rows"]}
            day = await call("get_calendar", {"days_ahead": 1})
            if units.get("SKU0001") == 40 and units.get("SKU0002") == 30 and day["today"]["is_workday"]:
                break
            await call("end_day", {})
        out["restock_day"] = wh["day"]
        await call(
            "restock",
            {
                "items": [
                    {"device_id": D0, "sku_id": "SKU0001", "qty": 20},
                    {"device_id": D0, "sku_id": "SKU0002", "qty": 15},
                    {"device_id": D1, "sku_id": "SKU0001", "qty": 15},
                    {"device_id": D1, "sku_id": "SKU0009", "qty": 1},  # not in the warehouse
                ]
            },
        )
        await call("adjust_price", {"items": [{"device_id": D0, "sku_id": "SKU0001", "price": 3.5}]})
        await call("write_memory", {"text": "stocked two machines"})
        for _ in range(3):
            await call("end_day", {})
        await call("get_device_detail", {"device_id": D0, "window_days": 3})
        await call("get_sku_across_devices", {"sku_id": "SKU0001", "window_days": 7})
        await call("get_sales_history", {"window_days": 7})
        await call("query_sql", {"sql": "SELECT device_id, SUM(units) FROM daily_sales GROUP BY device_id"})
        await call("query_sql", {"sql": "DELETE FROM daily_sales"})  # refused
        await call("read_memory", {})
        while True:
            end = await call("end_day", {})
            if end["done"]:
                break
        await call("get_weather", {})  # after the episode
        out["daily_end"] = (await s.get_prompt("daily")).messages[0].content.text
    return out


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> dict[str, Any]:
    trajectory = tmp_path_factory.mktemp("mcp") / "trajectory.jsonl"
    out = anyio.run(_play, trajectory)
    out["trajectory"] = trajectory
    # the same calls in process
    local = ToolSession(_world(), seed=SEED)
    out["local"] = local
    out["local_results"] = [local.call(name, args) for name, args, _, _ in out["calls"]]
    return out


@pytest.mark.slow
def test_lists_the_18_tools_with_their_schemas(played):
    local = {t["name"]: t for t in played["local"].tools()}
    tools = played["tools"]
    assert [t.name for t in tools] == list(local)
    assert len(tools) == 18
    for t in tools:
        assert t.input_schema == local[t.name]["input_schema"]
        assert t.output_schema == local[t.name]["output_schema"]  # the world's: its currency in the money texts
        assert json.dumps(t.output_schema).count("{currency}") == 0 == json.dumps(t.input_schema).count("{currency}")
        assert t.description == local[t.name]["description"]
        assert t.meta == {"autovend/kind": local[t.name]["kind"]}
    assert next(t for t in tools if t.name == "query_sql").annotations.read_only_hint is True
    assert next(t for t in tools if t.name == "restock").annotations.read_only_hint is False


def test_prompts_and_instructions(played):
    assert played["server"] == "autovend"
    assert played["instructions"] == played["local"].system_prompt()
    assert played["prompts"] == ["system", "daily"]
    assert played["daily_1"].splitlines()[0] == f"Day 1 of {DAYS} — Wednesday, 2025-01-01."
    assert "The episode is over" in played["daily_end"]


def test_every_result_equals_the_in_process_replay(played):
    assert len(played["calls"]) == len(played["local_results"]) > 30
    for (name, args, is_error, text), res in zip(played["calls"], played["local_results"], strict=True):
        assert is_error == (not res.ok), (name, args, text)
        if not res.ok:
            assert text == res.error
        elif name == "query_sql":  # elapsed_ms differs between runs
            a, b = json.loads(text), dict(res.content)
            a.pop("elapsed_ms"), b.pop("elapsed_ms")
            assert a == b
        else:
            assert json.loads(text) == res.content, name


def test_results_carry_structured_content_that_is_their_text(played):
    # the SDK's client has already checked each one against the tool's output schema
    for (name, _, is_error, text), structured in zip(played["calls"], played["structured"], strict=True):
        if is_error:  # a refusal: its message and code (docs/mcp-clients.md)
            Draft202012Validator(REFUSAL_SCHEMA).validate(structured)
            assert structured["error"] == text, name
        else:
            assert structured == json.loads(text), name
            Draft202012Validator(TOOLS_BY_NAME[name].output_schema).validate(structured)


def test_errors_reach_the_client_with_their_reason(played):
    errors = {(n, json.dumps(a)): t for n, a, e, t in played["calls"] if e}
    texts = list(errors.values())
    assert any("items[0].qty must be at least 1, got 0" in t for t in texts)
    assert any("items must be a list of objects" in t for t in texts)
    assert any("there is no tool 'sell_everything'" in t for t in texts)
    assert any("window_days must be one of 1, 3, 7 or 30, got 14" in t for t in texts)
    assert any("query_sql only runs a read-only SELECT" in t for t in texts)
    assert texts[-1].startswith("The episode is over")  # get_weather after the last day
    assert not any("Error executing tool" in t for t in texts)


def test_the_episode_matches_the_simulator(played):
    calls = {name: [] for name, *_ in played["calls"]}
    for name, _, is_error, text in played["calls"]:
        calls[name].append(None if is_error else json.loads(text))
    holiday = calls["restock"][0]
    assert holiday["rejected"][0]["code"] == "not_workday"
    restock = calls["restock"][1]
    assert restock["day"] == played["restock_day"] and played["restock_day"] in (6, 7)  # Monday or Tuesday
    assert (restock["n_accepted"], restock["rejected"][0]["code"]) == (3, "insufficient_stock")
    assert restock["visits_today"] == [D0, D1]
    settled = [c["settled"] for c in calls["end_day"]]
    assert [s["day"] for s in settled] == list(range(1, DAYS + 1))
    assert sum(s["labor"] for s in settled) == 70.0  # two machines, one visit each
    assert all(s["daily_fee"] == 12.0 for s in settled)
    sim = simulator_of(played["local"])
    assert sim.done and settled[-1]["net_assets"] == sim.net_assets
    assert settled[-1]["cash"] == sim.cash
    sold = sum(s["units_sold"] for s in settled)
    assert sold == int(sim.unit_flows()["sold"].sum()) > 0
    assert calls["end_day"][-1]["final"]["net_assets"] == sim.net_assets
    detail = calls["get_device_detail"][1]
    assert detail["products"]["rows"][0][:2] == ["SKU0001", sim.world.catalog.loc[0, "name"]]
    assert detail["products"]["rows"][0][7] == 3.5  # the price set
    assert calls["read_memory"][0]["text"] == "stocked two machines"
    by_device = dict(calls["query_sql"][0]["rows"])
    queried_on = played["restock_day"] + 3  # after three end_day calls
    assert sum(by_device.values()) == sum(s["units_sold"] for s in settled if s["day"] < queried_on)
    assert set(by_device) <= {D0, D1}


def test_the_server_wrote_the_trajectory(played):
    lines = read_trajectory(played["trajectory"])
    assert lines[0]["kind"] == "start" and lines[0]["seed"] == SEED and lines[0]["horizon_days"] == DAYS
    calls = lines[1:]
    assert [(c["tool"], c["arguments"], not c["ok"]) for c in calls] == [(n, a, e) for n, a, e, _ in played["calls"]]
    assert [c["seq"] for c in calls] == list(range(1, len(calls) + 1))
    ends = [c for c in calls if c["tool"] == "end_day"]
    assert [c["day"] for c in ends] == list(range(1, DAYS + 1))


# ----------------------------------------------------------------------------------- lines that are no message


class RawServer:
    """`autovend serve` over stdio in a subprocess, spoken to line by line (no MCP client in between)."""

    def __enter__(self) -> RawServer:
        self.proc = subprocess.Popen(
            [sys.executable, *SERVE], cwd=str(ROOT), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self.lines.put(x) for x in self.proc.stdout], daemon=True).start()
        return self

    def send(self, line: str) -> None:
        """Write one line (a notification: no answer is awaited)."""
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def ask(self, line: str) -> dict[str, Any]:
        """Write one line and read the answer (a line that got none would make this wait, then fail)."""
        self.send(line)
        return json.loads(self.lines.get(timeout=60))

    def __exit__(self, *exc_info: object) -> None:
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0  # the server ends cleanly when its input does
        self.proc.stdout.close()


@pytest.mark.slow
def test_a_line_that_is_no_message_is_answered_and_serving_goes_on():
    with RawServer() as server:
        ask = server.ask
        parse = ask('{"jsonrpc": "2.0", "id": 1, "method": "ping"')  # cut off
        assert (parse["id"], parse["error"]["code"]) == (None, -32700)
        assert "Parse error" in parse["error"]["message"]
        assert ask('{"jsonrpc": "2.0", "id": 1}')["error"]["code"] == -32600  # JSON, but no request
        batch = ask('[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]')  # before: -32600 naming nothing
        assert (batch["id"], batch["error"]["code"]) == (None, -32600)
        assert batch["error"]["message"].startswith("Invalid Request: the line is a batch (an array of 1 item)")
        init = ask(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": LATEST_HANDSHAKE_VERSION,
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "0"},
                    },
                }
            )
        )
        assert (init["id"], init["result"]["serverInfo"]["name"]) == (1, "autovend")
        server.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        huge = ask("x" * 1_000_000)
        assert (huge["id"], huge["error"]["code"]) == (None, -32700) and len(json.dumps(huge)) < 300
        call = ask(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "query_sql", "arguments": {"sql": "SELECT COUNT(*) FROM catalog"}},
                }
            )
        )
        assert call["id"] == 2 and json.loads(call["result"]["content"][0]["text"])["rows"] == [[12]]
        call = (
            '{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_weather", "arguments": "x"}}'
        )
        named = ask(call)  # before: "Invalid request parameters", naming nothing
        assert (named["id"], named["error"]["code"]) == (3, -32602)
        assert named["error"]["message"] == (
            "Invalid params of 'tools/call': params.arguments must be a JSON object, got a string (\"x\")"
        )


@pytest.mark.slow
def test_a_request_with_an_id_that_is_no_id_is_answered_and_serving_goes_on():
    call = '{"jsonrpc": "2.0", "id": ID, "method": "tools/call", "params": {"name": "get_weather", "arguments": {}}}'
    with RawServer() as server:  # before the fix an object id got no answer: server.ask waited, then failed
        ask = server.ask
        init = {"protocolVersion": LATEST_HANDSHAKE_VERSION, "capabilities": {}, "clientInfo": {"name": "raw"}}
        assert ask(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))["id"] == 1
        server.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for bad in ('{"a": 1}', "[1]", "1.5", "true", "null"):
            answer = ask(call.replace("ID", bad))
            assert (answer["id"], answer["error"]["code"]) == (None, -32600), bad
            assert answer["error"]["message"].startswith("Invalid Request: 'tools/call' is a request, and a request's")
        no_id = ask('{"jsonrpc": "2.0", "method": "ping"}')  # a request's method without an id
        assert (no_id["id"], no_id["error"]["code"]) == (None, -32600) and "'ping' is a request" in no_id["error"][
            "message"
        ]
        huge = ask(call.replace("ID", "1" + "0" * 5000))  # the guard refuses it: a parse error with its reason
        assert (huge["id"], huge["error"]["code"]) == (None, -32700)
        assert "id in the line is an integer of 5,001 digits" in huge["error"]["message"]
        # what the SDK's reader would have taken silently: a key twice (the last wins), NaN, a line of any length
        twice = ask(call.replace("ID", "8").replace('"get_weather"', '"get_weather", "name": "end_day"'))
        assert (twice["id"], twice["error"]["code"]) == (None, -32700)
        assert "params in the line: the key 'name' is given twice" in twice["error"]["message"]
        nan = ask(call.replace("ID", "9").replace("{}}", '{"page": NaN}}').replace("get_weather", "get_catalog"))
        assert (nan["id"], nan["error"]["code"]) == (None, -32700) and "is NaN, which is not JSON" in nan["error"][
            "message"
        ]
        long = ask(call.replace("ID", "10").replace("{}}", '{"q": "' + "x" * (5 << 20) + '"}}'))
        assert (long["id"], long["error"]["code"]) == (None, -32700)
        assert "over the limit of 4,194,304; it was skipped without being read" in long["error"]["message"]
        big = ask(
            call.replace("ID", "7")
            .replace("{}}", '{"query": "' + "x" * 2_000_000 + '"}}')
            .replace("get_weather", "get_catalog")
        )
        assert big["id"] == 7 and big["result"]["isError"]
        assert "over the limit of 131,072 characters" in big["result"]["content"][0]["text"]
        fine = ask(call.replace("ID", '"s-1"'))  # a string id is an id: answered with it
        assert fine["id"] == "s-1" and not fine["result"]["isError"]

"""`--mcp`: the model's tools over an `autovend serve` on stdio, mirrored in process, with resume."""

from __future__ import annotations

import contextlib
import sys

import pytest

from autovend.agents.llm.mcp_bridge import MCPBridge, MirroredSession, serve_command
from autovend.agents.llm.transcript import read_transcript
from autovend.env.boundary import simulator_of
from autovend.errors import MCPBridgeError
from autovend.mcp.server import build_server
from autovend.session import ToolSession
from autovend.tools.trajectory import read_trajectory
from tests.agents.llm.conftest import DAYS, SEED, make_agent, make_world, play
from tests.agents.llm.fake_openai import FakeOpenAI
from tests.mcp_http import served_over_http

SERVE = f"{sys.executable} -m autovend.cli serve --toy 3x12 --days {DAYS} --seed {SEED}"  # = make_world(), SEED


def _calls(out):
    return [
        {k: v for k, v in r.items() if k != "wall_ms"}
        for r in read_trajectory(out / "trajectory.jsonl")
        if r["kind"] == "call"
    ]


@contextlib.contextmanager
def _http_server():
    """`autovend serve --transport http` of the toy world, in this process (uvicorn in a thread)."""

    with served_over_http(build_server(make_world(), seed=SEED)) as url:
        yield url


@pytest.mark.slow
def test_play_over_mcp_and_resume_with_a_fresh_server(world, tmp_path_factory):
    ref_dir, mcp_dir = tmp_path_factory.mktemp("inproc"), tmp_path_factory.mktemp("mcp")
    with FakeOpenAI() as server:
        ref, ref_agent = play(world, lambda: make_agent(server.base_url), ref_dir)
    with FakeOpenAI() as server:
        # days 1-4 against `autovend serve` on stdio (a process of its own) ...
        session, agent = play(world, lambda: make_agent(server.base_url, mcp=SERVE), mcp_dir, stop_after=4)
        agent.close()  # the stdio server stops with the connection
        assert session.day == 5
        # ... then resume against a fresh server over streamable HTTP, which the bridge fast-forwards to day 5
        with _http_server() as url:
            session, agent = play(world, lambda: make_agent(server.base_url, mcp=url), mcp_dir, resume=True)
            agent.close()
        requests = server.requests
    assert agent._bridge.replayed == 3 + 3  # day 1: write_memory, place_order, end_day; days 2-4: end_day
    assert session.done and simulator_of(session).net_assets == simulator_of(ref).net_assets
    assert _calls(mcp_dir) == _calls(ref_dir)  # the mirror made the same calls with the same results
    # what the model saw over MCP is what it sees in process: system prompt, tools, prompts, results
    assert requests[0]["messages"][0]["content"] == ref.system_prompt()
    assert requests[0]["tools"] == read_transcript(ref_dir / "llm.jsonl")[0]["tools"]
    assert agent.conversation.messages == ref_agent.conversation.messages
    start = read_transcript(mcp_dir / "llm.jsonl")[0]
    assert start["mcp"] == SERVE and agent.usage()["mcp"] == url


class _StubClient:
    """An MCP client stand-in serving another session (no process)."""

    def __init__(self, served: ToolSession) -> None:
        self.served = served
        self.instructions = served.system_prompt()

    def call_tool(self, name, arguments):
        res = self.served.call(name, arguments)
        return (not res.ok), (res.to_json() if res.ok else res.error)

    def prompt(self, name):
        return self.served.daily_prompt()

    def list_tools(self):
        return []


class _Refusing(_StubClient):
    def call_tool(self, name, arguments):
        return True, f"{name}: refused"


def test_the_bridge_stops_when_the_server_plays_another_episode():
    local = ToolSession(make_world(), seed=SEED)
    other = ToolSession(make_world(), seed=SEED + 1)  # the same world with another seed: other demand draws
    mirror = MirroredSession(_StubClient(other), local)
    mirror.call("place_order", {"items": [{"sku_id": s, "qty": 40} for s in ("SKU0001", "SKU0002")]})
    items = [{"device_id": "CN_WORKSITE_01", "sku_id": s, "qty": 10} for s in ("SKU0001", "SKU0002")]
    with pytest.raises(MCPBridgeError, match=r"settled day \d+ differently from the run"):
        for _ in range(DAYS):
            if simulator_of(local).is_workday:
                mirror.call("restock", {"items": items})
            mirror.call("end_day", {})
    refusing = MirroredSession(_Refusing(other), ToolSession(make_world(), seed=SEED))
    with pytest.raises(MCPBridgeError, match="disagree on get_weather on day 1: server 'get_weather: refused', run ok"):
        refusing.call("get_weather", {})


def test_bridge_refuses_a_server_of_another_world(tmp_path):
    local = ToolSession(make_world(), seed=SEED)
    served = ToolSession(make_world(days=DAYS + 1), seed=SEED)  # another horizon: another system prompt
    bridge = MCPBridge("unused")
    bridge._client = _StubClient(served)
    with pytest.raises(MCPBridgeError, match="serves another world"):
        bridge.bind(local)


def test_serve_command_quotes_paths():
    cmd = serve_command("worlds/my world", 3, python="/usr/bin/python3")
    assert cmd == "/usr/bin/python3 -m autovend.cli serve --world 'worlds/my world' --seed 3"


def test_unreachable_server_is_a_clear_error():
    with pytest.raises(MCPBridgeError, match="cannot connect to the MCP server"):
        MCPBridge("http://127.0.0.1:9/mcp", timeout_s=2).bind(ToolSession(make_world(), seed=SEED))

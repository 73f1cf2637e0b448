"""`autovend serve --transport http`: loopback by default, the same tools, one episode per MCP session, a token."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from autovend.cli import app as cli_app
from autovend.console.server import free_port
from autovend.session import ToolSession
from autovend.tools.trajectory import read_trajectory
from tests.mcp_http import served_over_http

ROOT = Path(__file__).resolve().parents[2]
READ_TIMEOUT_S = 1.5  # the served CLI's --read-timeout


@pytest.fixture(scope="module")
def http_server():
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "autovend.cli", "serve", "--toy", "3x12", "--days", "5", "--transport", "http",
         "--port", str(port), "--read-timeout", str(READ_TIMEOUT_S)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.1)
    yield port
    proc.terminate()
    proc.wait(timeout=10)


def _listening_addresses(port: int) -> list[str]:
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            addr, p = local.rsplit(":", 1)
            if int(p, 16) == port and state == "0A":  # LISTEN
                out.append(addr)
    return out


def test_http_binds_loopback_only(http_server):
    addrs = _listening_addresses(http_server)
    if not Path("/proc/net/tcp").exists():
        pytest.skip("no /proc/net/tcp to inspect")
    assert addrs == ["0100007F"]  # 127.0.0.1, nothing on 0.0.0.0 or ::


def test_a_request_cut_short_is_answered_408_within_the_read_timeout_and_others_are_served(http_server):
    """Before, a POST declaring Content-Length 1000 that sent 10 bytes held its connection open forever."""
    import httpx2

    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", http_server)) as hanging:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{http_server}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
        )
        hanging.sendall(head.encode() + b'{"jsonrpc":')
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        opening = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}
        meanwhile = httpx2.post(f"http://127.0.0.1:{http_server}/mcp", json=opening, headers=HEADERS, timeout=10)
        answered_at = time.monotonic() - start
        hanging.settimeout(READ_TIMEOUT_S + 5)
        answer = b""
        while chunk := hanging.recv(65536):  # until the server closes the connection
            answer += chunk
    seconds = time.monotonic() - start
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 Request Timeout") and b"connection: close" in head
    assert json.loads(body)["error"].startswith("the request did not arrive in full within 1.5 s")
    assert READ_TIMEOUT_S - 0.05 <= seconds <= READ_TIMEOUT_S + 3
    assert meanwhile.status_code == 200 and answered_at < READ_TIMEOUT_S  # another client was answered at once


def test_http_serves_the_same_tools(http_server):
    async def run():
        async with (
            streamable_http_client(f"http://127.0.0.1:{http_server}/mcp") as (read, write),
            ClientSession(read, write) as s,
        ):
            await s.initialize()
            names = [t.name for t in (await s.list_tools()).tools]
            weather = await s.call_tool("get_weather", {})
            bad = await s.call_tool("get_calendar", {"days_ahead": 401})
            order = await s.call_tool("place_order", {"items": [{"sku_id": "SKU0001", "qty": 2}]})
            return names, weather, bad, order

    names, weather, bad, order = anyio.run(run)
    assert len(names) == 18 and names[0] == "place_order" and names[-1] == "write_memory"
    assert not weather.is_error and len(json.loads(weather.content[0].text)["days"]) == 8
    assert bad.is_error and "days_ahead must be at most 400, got 401" in bad.content[0].text
    assert json.loads(order.content[0].text)["n_accepted"] == 1


# ----------------------------------------------------------------------------------- one episode per session


def _text(result) -> str:
    return result.content[0].text


async def _two_sessions(url: str) -> dict:
    """Two sessions at once: `alice` (named) writes a note and ends two days, the other writes another and ends one."""
    async with (
        streamable_http_client(f"{url}?run=alice") as (ra, wa),
        ClientSession(ra, wa) as alice,
        streamable_http_client(url) as (rb, wb),
        ClientSession(rb, wb) as other,
    ):
        await alice.initialize()
        await other.initialize()
        await alice.call_tool("write_memory", {"text": "alice's note"})
        await other.call_tool("write_memory", {"text": "the other note"})
        await other.call_tool("place_order", {"items": [{"sku_id": "SKU0002", "qty": 3}]})
        for _ in range(2):
            await alice.call_tool("end_day", {})
        await other.call_tool("end_day", {})
        return {
            "alice": [_text(await alice.call_tool("read_memory", {})), _text(await alice.call_tool("get_weather", {}))],
            "other": [_text(await other.call_tool("read_memory", {})), _text(await other.call_tool("get_weather", {}))],
        }


async def _alice_again(url: str) -> tuple[str, str]:
    async with streamable_http_client(f"{url}?run=alice") as (r, w), ClientSession(r, w) as s:
        await s.initialize()
        daily = (await s.get_prompt("daily")).messages[0].content.text
        return daily.splitlines()[0], _text(await s.call_tool("read_memory", {}))


@pytest.mark.slow
def test_http_sessions_play_their_own_scored_episodes(tmp_path):
    from autovend.mcp.server import build_server
    from autovend.world.model import Economics
    from autovend.world.toy import toy_world

    world = toy_world(3, 12, seed=0, economics=Economics(horizon_days=5))
    app = build_server(world, seed=1, out=tmp_path, transport="http")
    with served_over_http(app) as url:
        seen = anyio.run(_two_sessions, url)
        folders = sorted(p.name for p in tmp_path.iterdir())
        other = next(name for name in folders if name != "alice")
        released = app.plays.opened(other) is None  # the other session ended (DELETE): its episode went
        kept = app.plays.opened("alice") is not None  # a named run stays for the next session
        again = anyio.run(_alice_again, url)
    assert json.loads(seen["alice"][0])["text"] == "alice's note"
    assert json.loads(seen["other"][0])["text"] == "the other note"
    assert json.loads(seen["alice"][1])["day"] == 3 and json.loads(seen["other"][1])["day"] == 2
    assert len(folders) == 2 and len(other) == 32  # alice, and the other session's id
    assert released and kept
    assert again[0] == "Day 3 of 5 — Friday, 2025-01-03." and json.loads(again[1])["text"] == "alice's note"
    alice = [r["tool"] for r in read_trajectory(tmp_path / "alice" / "trajectory.jsonl") if r["kind"] == "call"]
    theirs = [r["tool"] for r in read_trajectory(tmp_path / other / "trajectory.jsonl") if r["kind"] == "call"]
    assert alice == ["write_memory", "end_day", "end_day", "read_memory", "get_weather", "read_memory"]
    assert theirs == ["write_memory", "place_order", "end_day", "read_memory", "get_weather"]
    # a restarted server: alice goes on from the checkpoint of her last settled day
    with served_over_http(build_server(world, seed=1, out=tmp_path, transport="http")) as url:
        line, memory = anyio.run(_alice_again, url)
    assert line == "Day 3 of 5 — Friday, 2025-01-03." and json.loads(memory)["text"] == "alice's note"
    # `serve --finish`: both runs scored as they stand by the runner's evaluation
    args = ["serve", "--toy", "3x12", "--days", "5", "--seed", "1", "--out", str(tmp_path), "--finish"]
    finished = CliRunner().invoke(cli_app, args)
    assert finished.exit_code == 0, finished.output
    assert f"{tmp_path / 'alice'}: 2 days scored" in finished.output and "1 days scored" in finished.output
    local = ToolSession(world, seed=1)
    local.call("write_memory", {"text": "alice's note"})
    closing = [local.call("end_day", {}).content["settled"]["net_assets"] for _ in range(2)][-1]
    metrics = json.loads((tmp_path / "alice" / "metrics.json").read_text())
    run = json.loads((tmp_path / "alice" / "run.json").read_text())
    assert metrics["net_assets"] == pytest.approx(closing) and metrics["run"]["days"] == 2
    assert closing == 40_000 - 2 * 12  # alice only paid two days' fees: the close of day 2, before day 3's
    assert run["finished"] and run["days_requested"] == 2 and run["agent_config"]["transport"] == "http"


def test_a_bad_run_name_is_refused_with_the_rule(tmp_path):
    from autovend.mcp.server import build_server
    from autovend.world.toy import toy_world

    async def run(url: str):
        async with streamable_http_client(f"{url}?run=../up") as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            return await s.call_tool("get_weather", {})

    with served_over_http(build_server(toy_world(3, 12, seed=0), seed=1, out=tmp_path, transport="http")) as url:
        res = anyio.run(run, url)
    assert res.is_error and "run name '../up'" in _text(res) and "letters, digits" in _text(res)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_slow_query_of_one_session_does_not_hold_up_another():
    from autovend.mcp.server import build_server
    from autovend.world.toy import toy_world

    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c"
    order: list[str] = []

    async def slow(url: str) -> str:
        async with streamable_http_client(url) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            res = await s.call_tool("query_sql", {"sql": endless})  # runs until the 3 s limit stops it
            order.append("slow query answered")
            return _text(res)

    async def quick(url: str) -> None:
        async with streamable_http_client(url) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            await anyio.sleep(0.3)  # let the slow query start first
            for _ in range(5):
                await s.call_tool("get_weather", {})
                order.append("quick call answered")

    async def both(url: str) -> str:
        async with anyio.create_task_group() as tg:
            tg.start_soon(quick, url)
            text = await slow(url)
        return text

    with served_over_http(build_server(toy_world(3, 12, seed=0), seed=1, sql_time_limit_s=3.0)) as url:
        text = anyio.run(both, url)
    assert "time limit" in text
    assert order == ["quick call answered"] * 5 + ["slow query answered"]


def test_a_token_is_required_when_one_is_set():
    import httpx2
    from mcp.shared._httpx_utils import create_mcp_http_client

    from autovend.mcp.server import build_server
    from autovend.world.toy import toy_world

    async def with_token(url: str, token: str) -> int:
        async with (
            create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
            streamable_http_client(url, http_client=http) as (r, w),
            ClientSession(r, w) as s,
        ):
            await s.initialize()
            return len((await s.list_tools()).tools)

    with served_over_http(build_server(toy_world(3, 12, seed=0), seed=1), token="s3cret") as url:
        bare = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        wrong = httpx2.post(url, json={}, headers={"Authorization": "Bearer guess"})
        n_tools = anyio.run(with_token, url, "s3cret")
    assert (bare.status_code, wrong.status_code) == (401, 401)
    assert bare.headers["www-authenticate"].startswith("Bearer") and "Authorization: Bearer" in bare.json()["error"]
    assert n_tools == 18


HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
CALL = '{"jsonrpc": "2.0", "id": ID, "method": "tools/call", "params": {"name": "get_warehouse", "arguments": ARGS}}'


@pytest.mark.parametrize(
    "body,status,code,message",
    [
        pytest.param(
            CALL.replace("ID", '{"a": 1}').replace("ARGS", "{}"),
            400,
            -32600,
            "'tools/call' is a request",
            id="id-object",
        ),
        pytest.param(
            CALL.replace("ID", "[1]").replace("ARGS", "{}"), 400, -32600, "'tools/call' is a request", id="id-array"
        ),
        pytest.param(
            CALL.replace("ID", "2.5").replace("ARGS", "{}"), 400, -32600, "'tools/call' is a request", id="id-float"
        ),
        pytest.param(
            CALL.replace("ID", "false").replace("ARGS", "{}"), 400, -32600, "'tools/call' is a request", id="id-bool"
        ),
        pytest.param(
            CALL.replace("ID", "1").replace("ARGS", '{"page": 1, "page": 2}'),
            400,
            -32700,
            "params.arguments in the request body: the key 'page' is given twice",
            id="duplicate-key",
        ),
        pytest.param(
            CALL.replace("ID", "1").replace("ARGS", '{"page": NaN}'),
            400,
            -32700,
            "params.arguments.page in the request body is NaN",
            id="nan",
        ),
        pytest.param(
            CALL.replace("ID", "1").replace("ARGS", "[" * 100_000 + "]" * 100_000),
            400,
            -32700,
            "the request body: nested too deeply to read",
            id="deep",
        ),
    ],
)
def test_a_body_breaking_the_json_rules_or_with_no_valid_id_is_answered_400(body, status, code, message):
    import httpx2

    from autovend.mcp.server import build_server
    from autovend.world.toy import toy_world

    app = build_server(toy_world(3, 12, seed=0), seed=1)
    with served_over_http(app) as url:
        answer = httpx2.post(url, content=body, headers=HEADERS, timeout=30)
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        fine = httpx2.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}, headers=HEADERS
        )
        assert app.plays.opened(None) is None  # no episode was touched
    assert answer.status_code == status
    got = answer.json()
    assert (got["id"], got["error"]["code"]) == (None, code) and message in got["error"]["message"]
    assert fine.status_code == 200  # serving goes on


def test_any_loopback_address_gets_the_host_and_origin_checks():
    import httpx2

    from autovend.mcp.server import build_server
    from autovend.world.toy import toy_world

    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    with served_over_http(build_server(toy_world(3, 12, seed=0), seed=1), host="127.0.0.2") as url:
        rebound = httpx2.post(url, json=ping, headers={**HEADERS, "Host": "evil.example"})
        origin = httpx2.post(url, json=ping, headers={**HEADERS, "Origin": "http://evil.example"})
        own = httpx2.post(url, json=ping, headers={**HEADERS, "Origin": url.removesuffix("/mcp")})
        # what the SDK's prefix check ("http://127.0.0.2:*") let through: the exact rules of autovend.access
        longer = httpx2.post(url, json=ping, headers={**HEADERS, "Origin": url.removesuffix("/mcp") + ".evil.example"})
        host = url.split("/")[2]
        at = httpx2.post(url, json=ping, headers={**HEADERS, "Host": f"{host}@evil.example"})
    assert (rebound.status_code, origin.status_code) == (421, 403)
    assert own.status_code not in (421, 403)
    assert (longer.status_code, at.status_code) == (403, 421)
    assert "requests from the page of another site" in longer.json()["error"]
    assert "answers only requests addressed to this machine" in at.json()["error"]


# ----------------------------------------------------------------------------------- DELETE ends one's own session


def _raw_session(url: str) -> tuple[str, dict[str, str]]:
    """Open an MCP session over raw HTTP: (its id, the headers its later requests carry)."""
    import httpx2

    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    answer = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}, headers=HEADERS)
    assert answer.status_code == 200, answer.text
    headers = {**HEADERS, "mcp-session-id": answer.headers["mcp-session-id"], "mcp-protocol-version": "2025-06-18"}
    assert httpx2.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers).is_success
    return headers["mcp-session-id"], headers


def _raw_call(url: str, headers: dict[str, str], tool: str, arguments: dict) -> dict:
    """One tools/call over raw HTTP; its JSON-RPC answer (the SDK answers a POST as an event stream)."""
    import httpx2

    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    answer = httpx2.post(url, json=call, headers=headers, timeout=30)
    data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return json.loads(data[-1])


def test_a_delete_releases_only_the_episode_of_the_session_it_ends():
    """Before, `DELETE /mcp` with `mcp-session-id: alice` released the run named alice (the SDK answered 404)."""
    import httpx2

    from autovend.mcp.server import build_server
    from autovend.world.toy import toy_world

    app = build_server(toy_world(3, 12, seed=0), seed=1)

    async def alice_and_a_stranger(url: str) -> dict:
        async with streamable_http_client(f"{url}?run=alice") as (r, w), ClientSession(r, w) as alice:
            await alice.initialize()
            await alice.call_tool("write_memory", {"text": "alice's note"})
            await alice.call_tool("end_day", {})
            async with httpx2.AsyncClient() as stranger:
                forged = {
                    who: (await stranger.delete(url, headers={**HEADERS, "mcp-session-id": who})).status_code
                    for who in ("alice", "0" * 32, "", "ALICE")
                }
                by_query = await stranger.delete(f"{url}?run=alice", headers={**HEADERS, "mcp-session-id": "alice"})
            kept = app.plays.opened("alice") is not None
            memory = json.loads(_text(await alice.call_tool("read_memory", {})))["text"]
            day = json.loads(_text(await alice.call_tool("get_weather", {})))["day"]
        return {"forged": forged, "by_query": by_query.status_code, "kept": kept, "memory": memory, "day": day}

    with served_over_http(app) as url:
        seen = anyio.run(alice_and_a_stranger, url)
        after_her_own_end = app.plays.opened("alice") is not None  # her client ended its session (DELETE)
        mine, headers = _raw_session(url)
        assert _raw_call(url, headers, "write_memory", {"text": "mine"})["result"]["isError"] is False
        opened = app.plays.opened(mine) is not None
        again_alice = httpx2.delete(url, headers={**headers, "mcp-session-id": "alice"})
        alice_left = app.plays.opened("alice") is not None
        ended = httpx2.delete(url, headers=headers)
        released = app.plays.opened(mine) is None
        twice = httpx2.delete(url, headers=headers)
    assert set(seen["forged"].values()) == {404} and seen["by_query"] == 404  # no session of that id
    assert seen["kept"] and (seen["memory"], seen["day"]) == ("alice's note", 2)  # nothing of her day was lost
    assert after_her_own_end  # a named run stays for her next session, even when her own session ends
    assert opened and (again_alice.status_code, alice_left) == (404, True)
    assert (ended.status_code, released, twice.status_code) == (200, True, 404)

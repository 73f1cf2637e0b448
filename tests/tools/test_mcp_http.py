"""`autovend serve --transport http`: streamable HTTP on the loopback interface only, same tools."""

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

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def http_server():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "autovend.cli", "serve", "--toy", "3x12", "--days", "5", "--transport", "http",
         "--port", str(port)],
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

"""Helpers of the verify tests: the command line, a run's calls, and the MCP clients that play the doors' runs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp.client import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from typer.testing import CliRunner

from autovend.cli import app
from autovend.tools.trajectory import read_trajectory

ROOT = Path(__file__).resolve().parents[3]
DAYS = 6


def cli(*args: str) -> Any:
    """`autovend ARGS` in process (200 columns, so no message is wrapped)."""
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def calls(run_dir: Path) -> list[dict[str, Any]]:
    """The call records of a run's trajectory."""
    return [r for r in read_trajectory(run_dir / "trajectory.jsonl") if r.get("kind") == "call"]


async def http_session(url: str, actions: list[tuple[str, Any]]) -> None:
    """Send `actions` to an MCP server over streamable HTTP, as the named run `http`."""
    from mcp.client.streamable_http import streamable_http_client

    async with streamable_http_client(f"{url}?run=http") as (r, w, *_), ClientSession(r, w) as s:
        await s.initialize()
        for name, arguments in actions:
            res = await s.call_tool(name, arguments)
            assert not res.is_error or name != "end_day", res.content


async def mcp_session(bundle: Path, out: Path, actions: list[tuple[str, Any]], ends: int | None) -> None:
    """Send `actions` to `autovend serve --out out` over stdio until `ends` end_day calls have gone (None: all)."""
    args = ["-m", "autovend.cli", "serve", "--world", str(bundle), "--seed", "1", "--days", str(DAYS)]
    params = StdioServerParameters(command=sys.executable, args=[*args, "--out", str(out)], cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        done = 0
        for name, arguments in actions:
            res = await s.call_tool(name, arguments)
            assert not res.is_error or name != "end_day", res.content
            done += name == "end_day"
            if done == ends:
                return

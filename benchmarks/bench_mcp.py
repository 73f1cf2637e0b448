"""Benchmark: round trip of `get_device_detail` over MCP stdio, beside the SDK's floor (a trivial tool).

The server is this script run with `--serve`: a world (by default the toy world of 20 machines
and 1,372 products of `bench_episode.py`, or `--world worlds/cn20`) is played for `--days` days by
the scripted `KeepStocked` policy, so shelves, prices and 30 days of sales exist, and then served
over stdio with the 18 tools plus `ping` (an extra tool that returns {} at once: the floor of the
SDK, the pipes and JSON-RPC). The client (the SDK's own `ClientSession`) alternates ping and
get_device_detail (machines in turn, window 30 days) in one session, so both see the same process
and the same moment. In process, the same call is timed warm (state unchanged since the last
call) and cold (every call after a state change, as after a restock).

The SDK's client checks every structured result against the tool's output schema (jsonschema, in
the client process); ping has no output schema, so the floor has no such check. Each result's check
is run once more on its own and its CPU time taken, and the ratio is also given without it (about
what the server side and the transport cost; on a loaded machine a check's wall time exceeds its CPU
time, so the ratio without it is then still an upper bound). `--no-client-check` switches the check
off in the client for a direct measure.

    .venv/bin/python benchmarks/bench_mcp.py                     # 2,000 pairs on the toy world
    .venv/bin/python benchmarks/bench_mcp.py --world worlds/cn20 --calls 1000
    .venv/bin/python benchmarks/bench_mcp.py --no-client-check         # without the SDK client's schema check
    .venv/bin/pytest benchmarks/bench_mcp.py                      # pytest-benchmark, in process
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from autovend.env.boundary import simulator_of

ROOT = Path(__file__).resolve().parents[1]
N_MACHINES, N_PRODUCTS = 20, 1372
TARGET_RATIO = 1.2  # issue [M]: get_device_detail over stdio vs the SDK's ping


def make_world(world_path: str | None) -> Any:
    if world_path:
        from autovend.mcp.server import load_world

        return load_world(world_path)
    from autovend.world.toy import toy_world

    return toy_world(N_MACHINES, N_PRODUCTS, seed=0)


def played_session(world: Any, days: int, seed: int = 1) -> Any:
    """A session whose simulator has been run for `days` days by the scripted policy."""
    from autovend.session import ToolSession
    from autovend.sim.scripted import KeepStocked, rotating_assortment

    session = ToolSession(world, seed=seed)
    sim = simulator_of(session)
    policy = KeepStocked(
        assortment=rotating_assortment(sim, 40, 20),
        facing=5,
        cover_days=12,
        reorder_fraction=0.4,
        restock_below=3,
        review_days=2,
    )
    policy.run(sim, days=days)
    return session


def serve(world_path: str | None, days: int) -> None:
    """The server side: play `days` days, then serve the session over stdio with a `ping` tool."""
    from autovend.mcp.server import ExtraTool, build_server

    world = make_world(world_path)
    app = build_server(world, seed=1, extra_tools=[ExtraTool("ping", "Return {} at once.", lambda _: {})])
    sim = simulator_of(app.session)
    from autovend.sim.scripted import KeepStocked, rotating_assortment

    KeepStocked(
        assortment=rotating_assortment(sim, 40, 20),
        facing=5,
        cover_days=12,
        reorder_fraction=0.4,
        restock_below=3,
        review_days=2,
    ).run(sim, days=days)
    anyio.run(app.run_stdio)


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


async def _no_check(name: str, result: Any) -> None:
    """Stands in for the SDK client's output-schema check with --no-client-check."""


async def client(world_path: str | None, days: int, calls: int, warmup: int, check: bool = True) -> dict[str, Any]:
    from mcp.client import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    args = [str(Path(__file__).resolve()), "--serve", "--days", str(days)]
    if world_path:
        args += ["--world", world_path]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT))
    ping: list[float] = []
    detail: list[float] = []
    checks: list[float] = []
    sizes: list[int] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        if not check:
            s.validate_tool_result = _no_check  # type: ignore[method-assign]
        listing = await s.list_tools()
        obs = await s.get_prompt("daily")
        text = obs.messages[0].content.text  # type: ignore[union-attr]
        body = json.loads(text[text.index("{") : text.rindex("}") + 1])
        devices = [row[0] for row in body["devices"]["rows"]]
        for i in range(warmup + calls):
            dev = devices[i % len(devices)]
            t0 = time.perf_counter()
            await s.call_tool("ping", {})
            t1 = time.perf_counter()
            res = await s.call_tool("get_device_detail", {"device_id": dev, "window_days": 30})
            t2 = time.perf_counter()
            assert not res.is_error, res
            c0 = time.process_time()  # CPU, not wall: the check again on its own, without waiting for the machine
            await s.validate_tool_result("get_device_detail", res)  # the client's output-schema check
            c1 = time.process_time()
            if i >= warmup:
                ping.append((t1 - t0) * 1000)
                detail.append((t2 - t1) * 1000)
                checks.append((c1 - c0) * 1000)
                sizes.append(len(res.content[0].text))  # type: ignore[union-attr]
    return {
        "tools": len(listing.tools),
        "day": obs.description,
        "calls": calls,
        "ping_median_ms": statistics.median(ping),
        "ping_p99_ms": pct(ping, 0.99),
        "detail_median_ms": statistics.median(detail),
        "detail_p99_ms": pct(detail, 0.99),
        "check_median_ms": statistics.median(checks),
        "unchecked_median_ms": statistics.median(d - c for d, c in zip(detail, checks, strict=True)),
        "detail_bytes_median": statistics.median(sizes),
    }


def in_process(world_path: str | None, days: int, n: int = 400) -> dict[str, float]:
    """get_device_detail through `ToolSession.call`: warm (same state) and cold (after a state change)."""
    session = played_session(make_world(world_path), days)
    devices = simulator_of(session).device_ids
    warm, cold = [], []
    for i in range(n):
        dev = devices[i % len(devices)]
        t = time.perf_counter()
        session.call("get_device_detail", {"device_id": dev, "window_days": 30})
        warm.append((time.perf_counter() - t) * 1000)
    for i in range(n // 4):
        dev = devices[i % len(devices)]
        # a price change writes a record: the next read rebuilds its snapshot
        sku = simulator_of(session).sku_ids[i % 7]
        ref = simulator_of(session).price_band(sku)[0] * 2  # the reference price
        new = round(ref * (1.1 if i % 2 else 0.9), 2)
        res = session.call("adjust_price", {"items": [{"device_id": dev, "sku_id": sku, "price": new}]})
        assert res.content["n_accepted"] == 1, res
        t = time.perf_counter()
        session.call("get_device_detail", {"device_id": dev, "window_days": 30})
        cold.append((time.perf_counter() - t) * 1000)
    return {
        "warm_median_ms": statistics.median(warm),
        "warm_p99_ms": pct(warm, 0.99),
        "cold_median_ms": statistics.median(cold),
        "cold_p99_ms": pct(cold, 0.99),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--serve", action="store_true", help="(internal) run as the benchmark server")
    ap.add_argument("--world", default=None, help="world bundle (default: the 20x1372 toy world)")
    ap.add_argument("--days", type=int, default=45, help="days played before measuring")
    ap.add_argument("--calls", type=int, default=2000, help="measured ping/get_device_detail pairs")
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument(
        "--no-client-check",
        action="store_true",
        help="switch the SDK client's output-schema check off (what the server and the pipes cost)",
    )
    opts = ap.parse_args()
    if opts.serve:
        serve(opts.world, opts.days)
        return
    t = time.perf_counter()
    over_stdio = anyio.run(client, opts.world, opts.days, opts.calls, opts.warmup, not opts.no_client_check)
    wall = time.perf_counter() - t
    local = in_process(opts.world, opts.days)
    ratio_med = over_stdio["detail_median_ms"] / over_stdio["ping_median_ms"]
    ratio_p99 = over_stdio["detail_p99_ms"] / over_stdio["ping_p99_ms"]
    o, name = over_stdio, opts.world or f"toy {N_MACHINES}x{N_PRODUCTS}"
    print(f"world: {name}, played {opts.days} days ({o['day']})")
    print(f"stdio, {opts.calls} pairs in one session ({wall:.1f} s with start-up):")
    print(f"  ping (SDK floor)     median {o['ping_median_ms']:.3f} ms   p99 {o['ping_p99_ms']:.3f} ms")
    print(
        f"  get_device_detail    median {o['detail_median_ms']:.3f} ms   p99 {o['detail_p99_ms']:.3f} ms"
        f"   ({o['detail_bytes_median']:.0f} bytes of JSON)"
    )
    print(f"  ratio to the floor   median {ratio_med:.2f}x   p99 {ratio_p99:.2f}x   (target <= {TARGET_RATIO}x)")
    if opts.no_client_check:
        print("  (the SDK client's output-schema check was switched off: --no-client-check)")
    else:
        print(
            f"  of which the client's output-schema check  median {o['check_median_ms']:.3f} ms CPU; without it "
            f"{o['unchecked_median_ms']:.3f} ms, ratio {o['unchecked_median_ms'] / o['ping_median_ms']:.2f}x"
        )
    print("in process (ToolSession.call, get_device_detail):")
    print(f"  warm                 median {local['warm_median_ms']:.3f} ms   p99 {local['warm_p99_ms']:.3f} ms")
    print(f"  after a state change median {local['cold_median_ms']:.3f} ms   p99 {local['cold_p99_ms']:.3f} ms")


def test_device_detail_in_process(benchmark: Any) -> None:
    """pytest-benchmark: get_device_detail through ToolSession.call on a played world (warm)."""
    session = played_session(make_world(None), 30)
    dev = simulator_of(session).device_ids[3]
    res = benchmark(session.call, "get_device_detail", {"device_id": dev, "window_days": 30})
    assert res.ok


if __name__ == "__main__":
    main()

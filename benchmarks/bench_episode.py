"""Benchmark: a 180-day episode on a toy world of 20 machines and 1,372 products, kept stocked by a script.

The policy (`autovend.sim.scripted.KeepStocked`) gives each machine 40 products (5 units each,
neighbouring machines share half their assortment: 420 products in all), refills a product when
fewer than 3 units are left, takes soon-to-expire units off the shelves, and every second day
orders up to 12 days of recent sales. Run either way:

    .venv/bin/python benchmarks/bench_episode.py          # prints timings and where the time goes
    .venv/bin/pytest benchmarks/bench_episode.py          # pytest-benchmark, 3 rounds
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from autovend.sim import Simulator
from autovend.sim.scripted import KeepStocked, rotating_assortment
from autovend.world.model import World
from autovend.world.toy import toy_world

N_MACHINES, N_PRODUCTS, SEED = 20, 1372, 1
GOAL_MS_PER_MACHINE_DAY = 0.1  # issues [M], [S]: the simulator alone, on a 2-core machine
GOAL_US_PER_CELL = 0.5  # issue [S]: end_day per stocked machine-product-day, with the choice model
SIM_CALLS = ("end_day", "place_order", "adjust_price", "discard", "restock", "reduce", "delist", "expired_by")


def make_world() -> World:
    return toy_world(N_MACHINES, N_PRODUCTS, seed=0)


def make_policy(sim: Simulator) -> KeepStocked:
    return KeepStocked(
        assortment=rotating_assortment(sim, 40, 20),
        facing=5,
        cover_days=12,
        reorder_fraction=0.4,
        restock_below=3,
        review_days=2,
    )


def episode(world: World, seed: int = SEED) -> Simulator:
    sim = Simulator(world, seed=seed)
    make_policy(sim).run(sim)
    return sim


def timed_episode(world: World, seed: int = SEED) -> tuple[float, Counter, Counter, Simulator, Counter]:
    """One episode; returns the wall time, seconds per simulator method, items per method, the simulator
    and the CPU seconds spent inside each simulator method (the figure that holds on a busy machine)."""
    sim = Simulator(world, seed=seed)
    policy = make_policy(sim)
    seconds: Counter = Counter()
    items: Counter = Counter()
    cpu: Counter = Counter()
    for name in SIM_CALLS:
        method: Callable[..., Any] = getattr(sim, name)

        def wrapped(*args: Any, _m: Callable[..., Any] = method, _n: str = name, **kw: Any) -> Any:
            t, c = time.perf_counter(), time.process_time()
            out = _m(*args, **kw)
            seconds[_n] += time.perf_counter() - t
            cpu[_n] += time.process_time() - c
            items[_n] += len(args[0]) if args and isinstance(args[0], list) else 1
            return out

        setattr(sim, name, wrapped)
    t0 = time.perf_counter()
    policy.run(sim)
    return time.perf_counter() - t0, seconds, items, sim, cpu


def numpy_peer(cells_per_day: list[int], seed: int = 0) -> float:
    """CPU seconds of a plain numpy day loop over the same number of stocked cells (the floor of end_day).

    Each day: base rates times a shelf factor, a uniform per cell, a Poisson draw, sales = min(draw,
    shelf), the shelf taken down and the day's units summed; no choice model, no books, no records.
    """
    rng = np.random.default_rng(seed)
    c = time.process_time()
    for n in cells_per_day:
        b = rng.random(n)
        q = rng.integers(1, 6, n)
        lam = b * np.minimum(1.0, q / 5.0)
        rng.random(n)
        demand = rng.poisson(lam)
        sales = np.minimum(demand, q)
        q -= sales
        int(sales.sum())
    return time.process_time() - c


def test_episode_benchmark(benchmark: Any) -> None:
    world = make_world()
    sim = benchmark.pedantic(episode, args=(world,), rounds=3, iterations=1, warmup_rounds=0)
    assert sim.done and sim.day == 180


def main() -> None:
    t = time.perf_counter()
    world = make_world()
    print(f"toy world {N_MACHINES} machines x {N_PRODUCTS} products built in {time.perf_counter() - t:.2f} s")
    times, cpu = [], []
    for _ in range(5):
        t, c = time.perf_counter(), time.process_time()
        sim = episode(world)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    days = sim.horizon_days
    best, median = min(times), statistics.median(times)
    print(f"episode of {days} days, 5 runs: wall best {best:.2f} s, median {median:.2f} s")
    print(f"CPU time of the process: best {min(cpu):.2f} s")
    print(f"per simulated day: best {best / days * 1000:.1f} ms, median {median / days * 1000:.1f} ms")
    wall, seconds, items, sim, cpu_by = timed_episode(world)
    inside_cpu = sum(cpu_by.values())
    inside = sum(seconds.values())
    print(f"instrumented run {wall:.2f} s: simulator {inside:.2f} s, policy {wall - inside:.2f} s")
    per_md = inside / (days * N_MACHINES) * 1000
    print(
        f"simulator alone: {per_md:.3f} ms per machine-day ({inside / days * 1000:.2f} ms per day)"
        f"  | ratio to the goal {GOAL_MS_PER_MACHINE_DAY} ms: {per_md / GOAL_MS_PER_MACHINE_DAY:.2f}"
    )
    per_md_cpu = inside_cpu / (days * N_MACHINES) * 1000
    print(f"simulator alone, CPU time: {per_md_cpu:.3f} ms per machine-day (wall figures suffer on a busy machine)")
    for name, sec in seconds.most_common():
        per_item = sec / max(items[name], 1) * 1e6
        print(f"  {name:12s} {sec:6.2f} s  {items[name]:6d} items  {per_item:7.1f} us/item")
    demand = sim.hidden.frame("demand")
    cells = demand.groupby("day").size().reindex(range(1, days + 1), fill_value=0).tolist()
    end_cpu = cpu_by["end_day"]
    per_cell = end_cpu / max(sum(cells), 1) * 1e6
    peer = min(numpy_peer(cells) for _ in range(3)) / max(sum(cells), 1) * 1e6
    print(
        f"end_day per stocked machine-product-day (CPU): {per_cell:.2f} us over {sum(cells):,} cells"
        f"  | ratio to the goal {GOAL_US_PER_CELL} us: {per_cell / GOAL_US_PER_CELL:.2f}"
        f"  | ratio to a plain numpy loop over the same cells ({peer:.2f} us): {per_cell / peer:.1f}"
    )
    b = sim.balance()
    flows = sim.unit_flows()
    print(
        f"end: net assets {b.net_assets:,.2f} CNY, {int(flows['sold'].sum()):,} units sold, "
        f"{sum(len(r.visited) for r in sim.reports):,} visits, {len(sim.records.frame('orders')):,} orders"
    )


if __name__ == "__main__":
    main()

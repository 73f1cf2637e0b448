"""Runs for the report.html tests: a hand-made 3-day run (numbers by hand) and short toy-world baseline runs."""

from __future__ import annotations

import pytest

from autovend.agents.baseline import BaselineAgent, BaselineConfig
from autovend.runner import run_episode
from autovend.world.model import Economics
from autovend.world.toy import toy_world

from ..conftest import make_run, summary_row

DAYS = 10


@pytest.fixture(scope="session")
def toy_run_dirs(tmp_path_factory):
    """Two evaluated 10-day baseline runs (seeds 1 and 2) on one toy world; the agent stocks shelves on day 6."""
    world = toy_world(4, 30, seed=0, economics=Economics(horizon_days=DAYS))
    base = tmp_path_factory.mktemp("toy-runs")
    dirs = []
    for seed in (1, 2):
        agent = BaselineAgent(BaselineConfig(starter_skus=12, n_skus=10), seed=seed)
        run_episode(world, agent, seed, out_dir=base / f"baseline-s{seed}", checkpoint="off")
        dirs.append(base / f"baseline-s{seed}")
    return dirs


def _call(seq, day, tool, ok=True, accepted=0, rejected=0):
    result = {"n_accepted": accepted, "n_rejected": rejected} if tool not in ("get_catalog", "end_day") else {}
    return {"kind": "call", "seq": seq, "day": day, "tool": tool, "ok": ok, "result": result if ok else None}


@pytest.fixture(scope="module")
def hand_run(world):
    """Three days. M1 (office) stocks 4 A and 4 B on day 1, M2 (campus) 4 C; A goes to 6.00 (1.5 x 4.00) on day 2.

    Sales: M1 sells 2 A (8.00, cost 4.00) on day 1 and 1 B (5.00, cost 2.00) on day 2; M2 sells nothing.
    M1 is visited on days 1 and 3: 4.00 + 3.00 = 7.00 gross profit in between, under the 35.00 visit fee.
    """
    return make_run(
        world,
        calls=[
            _call(1, 1, "get_catalog"),
            _call(2, 1, "restock", accepted=3),
            _call(3, 1, "adjust_price", accepted=0, rejected=1),
            _call(4, 1, "end_day"),
            _call(5, 2, "adjust_price", accepted=1),
            _call(6, 2, "restock", ok=False),
            _call(7, 2, "end_day"),
            _call(8, 3, "end_day"),
        ],
        daily_summary=[
            summary_row(1, cash=100.0, net_assets=150.0, revenue=8.0, gross_profit=4.0, daily_fee=20.0, visit=35.0),
            summary_row(2, cash=105.0, net_assets=151.0, revenue=5.0, gross_profit=3.0, warehouse_rent=1.5),
            summary_row(3, cash=100.0, net_assets=148.0, visit=35.0, expiry_writeoff=2.0, discard_writeoff=0.5),
        ],
        shelf_events=[
            (1, "M1", "A", "restock", 4, 0),
            (1, "M1", "B", "restock", 4, 0),
            (1, "M2", "C", "restock", 4, 0),
        ],
        price_changes=[(2, "M1", "A", 4.0, 6.0)],
        daily_sales=[
            (1, "2025-03-03", "M1", "A", 2, 8.0, 4.0, 0, 0.0),
            (2, "2025-03-04", "M1", "B", 1, 5.0, 2.0, 0, 0.0),
        ],
        visits=[(1, "M1", 2), (1, "M2", 1), (3, "M1", 1)],
        machine_days=[
            (1, "M1", 8, 0, 2, 2, 0, 0, 2, 8.0, 4.0, 2.5, 0),
            (1, "M2", 4, 0, 1, 6, 0, 0, 0, 0.0, 0.0, 0.4, 0),
            (2, "M1", 6, 0, 2, 4, 0, 1, 1, 5.0, 3.0, 1.5, 2),
            (2, "M2", 0, 0, 0, 10, 1, 0, 0, 0.0, 0.0, 0.0, 0),
        ],
        demand=[
            (1, "M1", "A", 4, 4.0, 2.0, 2, 2, 0),
            (2, "M1", "A", 2, 6.0, 1.0, 3, 2, 1),
            (2, "M1", "B", 4, 5.0, 1.0, 2, 1, 1),
        ],
    )

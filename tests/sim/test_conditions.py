"""The simulator honours a world's conditions (`autovend.world.conditions`): each dynamic shipped scenario, run for a
few days beside the base world on the same seed, does what it says and nothing else."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from autovend.env import VendingEnv
from autovend.sim import Simulator
from autovend.world.bundle import load_world
from autovend.world.derive import derive_world
from autovend.world.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SEED = 7


@pytest.fixture(scope="module")
def cn20():
    return load_world(ROOT / "worlds" / "cn20")


def variant(cn20, name: str):
    return derive_world(cn20, load_scenario(name))


def order_many(sim: Simulator, n: int, qty: int = 10) -> list[int]:
    """One order line for each of the first `n` products; their order ids."""
    res = sim.place_order([{"sku_id": s, "qty": qty} for s in sim.sku_ids[:n]])
    assert res.n_rejected == 0
    return [a.detail["order_id"] for a in res.accepted]


def leads(sim: Simulator) -> dict[int, tuple[int, int]]:
    """order id -> (drawn lead time, arrival day) from the hidden log."""
    t = sim.hidden.frame("lead_times")
    return {int(r.order_id): (int(r.lead_days), int(r.arrival_day)) for r in t.itertuples()}


def advance(sims: list[Simulator], day: int) -> None:
    for sim in sims:
        while sim.day < day:
            sim.end_day()


def fill(
    sims: list[Simulator],
    order_day: int,
    restock_by: int,
    n_skus: int = 12,
    qty: int = 8,
    skus: list[str] | None = None,
) -> None:
    """In every sim alike: order the products `skus` (default: the first n_skus) on `order_day`, restock them at every
    machine on the last workday up to `restock_by` (units land within 6 days)."""
    skus = skus or list(sims[0].sku_ids[:n_skus])
    advance(sims, order_day)
    for sim in sims:
        sim.place_order([{"sku_id": s, "qty": qty * sim.n_machines} for s in skus])
    last = max(d for d in range(order_day + 6, restock_by + 1) if sims[0].day_info(d).is_workday)
    advance(sims, last)
    for sim in sims:
        items = [{"device_id": m, "sku_id": s, "qty": qty} for m in sim.device_ids for s in skus]
        res = sim.restock(items)
        assert res.n_rejected == 0, res.rejected[:2]


def draw_rates(sim: Simulator) -> np.ndarray:
    """(M, K) expected demand of today on the shelves as they stand."""
    x = sim.draw_demand()
    out = np.zeros((sim.n_machines, sim.n_products))
    out[np.ix_(x.rows, x.cols)] = x.rates
    return out


# ------------------------------------------------------------------------------------------------ suppliers


def test_express_orders_land_next_day_at_a_15_percent_premium_booked_as_a_cost(cn20):
    base, fast = Simulator(cn20, seed=SEED), Simulator(variant(cn20, "express-supplier"), seed=SEED)
    k = 5
    sku = fast.sku_ids[k]
    cost = int(fast.cost_fen[k])
    price = math.floor(cost * 1.15 + 0.5)
    res = fast.place_order([{"sku_id": sku, "qty": 10, "supplier_id": "express"}])
    (acc,) = res.accepted
    assert acc.detail["supplier_id"] == "express" and acc.detail["eta_day"] == 2
    assert acc.detail["unit_price"] == price / 100 and acc.detail["premium"] == 10 * (price - cost) / 100
    assert acc.detail["total_cost"] == 10 * price / 100
    assert fast.cash_fen == base.cash_fen - 10 * price
    # stock counts at the unit cost; the premium is the day's cost and lowers net
    assert fast.balance().in_transit_fen == 10 * cost
    report = fast.end_day()
    assert report.costs_fen["supplier_premium"] == 10 * (price - cost)
    assert report.balance.net_assets_fen == fast.start_cash_fen + report.net_fen
    costs = fast.records.frame("daily_costs")
    assert set(costs["kind"]) >= {"supplier_premium"} and "supplier_premium" not in set(
        base.records.frame("daily_costs")["kind"]
    )
    lead, arrival = leads(fast)[1]
    assert lead in (1, 2) and arrival == 1 + lead
    advance([fast], 4)
    assert fast.warehouse_units()[k] == 10
    # the base world has no such supplier
    (rej,) = base.place_order([{"sku_id": sku, "qty": 1, "supplier_id": "express"}]).rejected
    assert rej.code == "unknown_supplier" and "use 'default' or omit it" in rej.message
    (rej,) = fast.place_order([{"sku_id": sku, "qty": 1, "supplier_id": "acme"}]).rejected
    assert "use one of 'default', 'express'" in rej.message


def test_default_orders_are_the_same_in_a_world_with_another_supplier(cn20):
    base, fast = Simulator(cn20, seed=SEED), Simulator(variant(cn20, "express-supplier"), seed=SEED)
    for sim in (base, fast):
        order_many(sim, 30)
    assert leads(base) == leads(fast)
    assert base.cash_fen == fast.cash_fen


def test_late_deliveries_never_come_earlier_and_average_5_days(cn20):
    base, late = Simulator(cn20, seed=SEED), Simulator(variant(cn20, "late-deliveries"), seed=SEED)
    for sim in (base, late):
        order_many(sim, 400, qty=1)
    b, w = leads(base), leads(late)
    assert all(w[i][0] >= b[i][0] for i in b)  # the same uniform per order, a later quantile
    assert np.mean([v[0] for v in w.values()]) == pytest.approx(5.1, abs=0.35)
    assert np.mean([v[0] for v in b.values()]) == pytest.approx(3.23, abs=0.2)
    (acc, *_) = late.place_order([{"sku_id": late.sku_ids[0], "qty": 1}]).accepted
    assert acc.detail["eta_day"] == 1 + 3  # the promise is unchanged


def test_partial_deliveries_split_about_40_percent_of_orders_and_every_unit_lands(cn20):
    sim = Simulator(variant(cn20, "partial-deliveries"), seed=SEED)
    ids = order_many(sim, 200, qty=10)
    split = {oid: o for oid, o in sim._state.orders.items() if o.split_qty}
    assert 60 <= len(split) <= 100  # Binomial(200, 0.4): mean 80, sd 6.9
    for o in split.values():
        assert 3 <= o.qty - o.split_qty <= 7 and 3 <= o.rest_day - o.arrival_day <= 7
    one = min(split.values(), key=lambda o: o.arrival_day)
    advance([sim], one.arrival_day)
    row = [r for r in sim.in_transit_rows() if r[0] == one.order_id]
    assert row and row[0][2] == one.split_qty  # only the rest is still on its way
    advance([sim], 20)
    assert sim.warehouse_units()[:200].tolist() == [10] * 200 and sim.in_transit_units().sum() == 0
    arrivals = sim.records.frame("arrivals")
    assert len(arrivals) == 200 + len(split) and int(arrivals["qty"].sum()) == 2000
    assert sorted(set(arrivals["order_id"])) == ids


def test_the_outage_holds_deliveries_due_on_days_50_to_63_until_day_64(cn20):
    base, out = Simulator(cn20, seed=SEED), Simulator(variant(cn20, "supplier-outage"), seed=SEED)
    advance([base, out], 46)
    for day in (46, 47, 48, 49, 50, 55):
        advance([base, out], day)
        for sim in (base, out):
            order_many(sim, 20, qty=1)
    b, w = leads(base), leads(out)
    held = 0
    for oid, (lead, arrival) in b.items():
        if 50 <= arrival <= 63:
            assert w[oid] == (lead, 64)
            held += 1
        else:
            assert w[oid] == (lead, arrival)
    assert held >= 60  # every order placed from day 47 on is due in the window
    env = VendingEnv(variant(cn20, "supplier-outage"))
    try:
        obs = env.reset(seed=SEED)
        assert "notices" not in obs.report
        for _ in range(49):
            obs = env.end_day().observation
        assert obs.day == 50 and "delivers nothing from day 50" in obs.report["notices"][0]
    finally:
        env.close()


# ------------------------------------------------------------------------------------------------ demand


def test_the_competitor_cuts_commercial_demand_to_65_percent_from_day_46_and_nothing_else(cn20):
    base, comp = Simulator(cn20, seed=SEED), Simulator(variant(cn20, "competitor-commercial"), seed=SEED)
    fill([base, comp], 36, 45)
    advance([base, comp], 45)
    np.testing.assert_array_equal(draw_rates(base), draw_rates(comp))  # the day before: the same
    advance([base, comp], 46)
    rb, rc = draw_rates(base), draw_rates(comp)
    commercial = (cn20.machines["site_type"] == "commercial").to_numpy()
    assert rb[commercial].sum() > 0
    np.testing.assert_allclose(rc[commercial], 0.65 * rb[commercial], rtol=1e-12)
    np.testing.assert_array_equal(rc[~commercial], rb[~commercial])


def test_the_closed_site_sells_nothing_from_day_91(cn20):
    world = variant(cn20, "site-closing")
    base, closed = Simulator(cn20, seed=SEED), Simulator(world, seed=SEED)
    fill([base, closed], 80, 90)
    advance([base, closed], 91)
    m = closed.device_index("CN_CAMPUS_02")
    rb, rc = draw_rates(base), draw_rates(closed)
    assert rb[m].sum() > 1 and rc[m].sum() == 0
    others = np.arange(closed.n_machines) != m
    np.testing.assert_array_equal(rc[others], rb[others])
    report = closed.end_day()
    assert report.machines.set_index("device_id").loc["CN_CAMPUS_02", "units_sold"] == 0
    assert closed.reduce([{"device_id": "CN_CAMPUS_02", "sku_id": closed.sku_ids[0], "qty": 1}]).n_accepted == (
        1 if closed.is_workday else 0
    )


def test_the_broken_machines_sell_nothing_and_refuse_restock_on_days_31_to_44(cn20):
    world = variant(cn20, "machine-breakdown")
    base, broke = Simulator(cn20, seed=SEED), Simulator(world, seed=SEED)
    fill([base, broke], 20, 30)
    advance([base, broke], 31)
    m = [broke.device_index(d) for d in ("CN_CAMPUS_02", "CN_RESIDENTIAL_03")]
    rb, rw = draw_rates(base), draw_rates(broke)
    assert rb[m].sum() > 0 and rw[m].sum() == 0
    others = np.ones(broke.n_machines, bool)
    others[m] = False
    np.testing.assert_array_equal(rw[others], rb[others])
    day = next(d for d in range(31, 45) if broke.day_info(d).is_workday)
    advance([base, broke], day)
    sku = broke.sku_ids[0]
    res = broke.restock([{"device_id": "CN_CAMPUS_02", "sku_id": sku, "qty": 1}])
    (rej,) = res.rejected
    assert rej.code == "machine_out_of_order" and "until day 44" in rej.message
    assert broke.reduce([{"device_id": "CN_CAMPUS_02", "sku_id": sku, "qty": 1}]).n_accepted == 1  # still works
    assert broke.restock([{"device_id": "CN_WORKSITE_01", "sku_id": sku, "qty": 1}]).n_accepted == 1
    advance([broke], next(d for d in range(45, 60) if broke.day_info(d).is_workday))
    assert broke.reduce([{"device_id": "CN_WORKSITE_01", "sku_id": sku, "qty": 1}]).n_accepted == 1
    assert broke.restock([{"device_id": "CN_CAMPUS_02", "sku_id": sku, "qty": 1}]).n_accepted == 1  # repaired


def test_the_heatwave_raises_drinks_and_lowers_snacks_by_the_temperature_response(cn20):
    base, hot = Simulator(cn20, seed=SEED), Simulator(variant(cn20, "heatwave"), seed=SEED)
    cats = cn20.catalog["category_l1"].astype(str)
    skus = [*cn20.catalog["sku_id"][cats == "drinks"][:10], *cn20.catalog["sku_id"][cats == "snacks"][:10]]
    fill([base, hot], 130, 140, qty=5, skus=skus)
    advance([base, hot], 141)
    t_base, _, _ = base._facts.days.weather(141)
    t_hot, p_hot, _ = hot._facts.days.weather(141)
    assert t_hot == pytest.approx(t_base + 11) and p_hot == 0
    temp = cn20.demand_model.settings.environment.temperature
    gap = float(np.clip(t_hot - 21, -15, 15) - np.clip(t_base - 21, -15, 15))
    rb, rh = draw_rates(base), draw_rates(hot)
    drinks, snacks = (cats == "drinks").to_numpy(), (cats == "snacks").to_numpy()
    # E changes by exp(slope[category] x gap); the rain multiplier is the machine's, the same for both categories
    want = math.exp((temp.slope_per_c["drinks"] - temp.slope_per_c["snacks"]) * gap)
    assert want > 1.2
    for m in range(base.n_machines):
        d = rh[m, drinks & (rb[m] > 0)] / rb[m, drinks & (rb[m] > 0)]
        n = rh[m, snacks & (rb[m] > 0)] / rb[m, snacks & (rb[m] > 0)]
        assert d.size > 0 and n.size > 0
        np.testing.assert_allclose(d / n[0], want, rtol=1e-9)


def test_the_holiday_season_refuses_site_visits_on_days_91_to_100(cn20):
    sim = Simulator(variant(cn20, "holiday-season"), seed=SEED)
    base = Simulator(cn20, seed=SEED)
    assert [sim.day_info(d).is_workday for d in range(91, 101)] == [False] * 10
    assert any(base.day_info(d).is_workday for d in range(91, 101))
    advance([sim], 93)
    (rej,) = sim.restock([{"device_id": sim.device_ids[0], "sku_id": sim.sku_ids[0], "qty": 1}]).rejected
    assert rej.code == "not_workday" and "spring festival week" in rej.message
    assert sim.today.day_type == "holiday"


# ------------------------------------------------------------------------------------------------ costs


def test_cost_inflation_and_fee_rise_show_in_orders_and_the_daily_costs(cn20):
    base, dear = Simulator(cn20, seed=SEED), Simulator(variant(cn20, "cost-inflation"), seed=SEED)
    k = 3
    (a,) = base.place_order([{"sku_id": base.sku_ids[k], "qty": 4}]).accepted
    (b,) = dear.place_order([{"sku_id": dear.sku_ids[k], "qty": 4}]).accepted
    assert b.detail["unit_cost"] == pytest.approx(round(a.detail["unit_cost"] * 1.15 + 1e-9, 2))
    fees = Simulator(variant(cn20, "fee-rise"), seed=SEED)
    assert fees.day_start.daily_fee_fen == 120 * 100 and base.day_start.daily_fee_fen == 80 * 100
    fill([fees], 1, 12, n_skus=1, qty=1)
    report = fees.end_day()
    assert report.costs_fen["visit"] == 20 * 6000


# ------------------------------------------------------------------------------------------------ the tools


def test_the_tools_show_the_second_supplier_and_the_base_world_stays_as_it_was(cn20):
    fast = VendingEnv(variant(cn20, "express-supplier"))
    plain = VendingEnv(cn20)
    try:
        fast.reset(seed=1)
        plain.reset(seed=1)
        desc = {t["name"]: t["description"] for t in fast.tools()}
        assert "'express' (1.15 x the unit cost, delivery promised in 1 days)" in desc["place_order"]
        assert "Besides the default supplier you may order from 'express'" in fast.system_prompt()
        cat = fast.call("get_catalog", {"page_size": 1}).content
        assert [s["supplier_id"] for s in cat["suppliers"]] == ["default", "express"]
        assert cat["suppliers"][1]["price_factor"] == 1.15
        plain_desc = {t["name"]: t["description"] for t in plain.tools()}
        assert "supplier_id defaults to 'default', the only supplier." in plain_desc["place_order"]
        assert "Besides the default supplier" not in plain.system_prompt()
        assert "suppliers" not in plain.call("get_catalog", {"page_size": 1}).content
        res = fast.call("place_order", {"items": [{"sku_id": cat["rows"][0][0], "qty": 2, "supplier_id": "express"}]})
        assert res.ok and res.content["accepted"][0]["supplier_id"] == "express"
    finally:
        fast.close()
        plain.close()


def test_a_checkpoint_of_one_scenario_does_not_load_on_another(cn20, tmp_path):
    """Two scenarios with the same tables but other conditions are other worlds to a checkpoint."""
    from autovend.errors import CheckpointError
    from autovend.sim.checkpoint import world_fingerprint
    from autovend.world.scenario import parse_scenario

    text = {"name": "o", "summary": "s", "tests": "t", "shows": "w"}
    a = derive_world(cn20, parse_scenario({**text, "changes": {"outages": [{"first_day": 5, "last_day": 9}]}}))
    b = derive_world(cn20, parse_scenario({**text, "changes": {"outages": [{"first_day": 5, "last_day": 12}]}}))
    assert a.name == b.name and world_fingerprint(a) != world_fingerprint(b)
    assert world_fingerprint(cn20) == world_fingerprint(cn20.replace(conditions=cn20.conditions))
    sim = Simulator(a, seed=1)
    sim.save(tmp_path / "a.ckpt")
    with pytest.raises(CheckpointError):
        Simulator.load(tmp_path / "a.ckpt", b)
    assert Simulator.load(tmp_path / "a.ckpt", a).day == 1

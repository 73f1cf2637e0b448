"""The rows each event writes into the agent-visible records and the hidden log."""

from __future__ import annotations

import pytest

from autovend.sim import inventory as inv
from autovend.sim.facts import WorldFacts
from autovend.sim.hidden import HiddenLog
from autovend.sim.recorder import Recorder
from autovend.sim.records import RECORD_TABLES, RecordStore
from autovend.sim.results import Arrival


@pytest.fixture
def recorder(world):
    return Recorder(WorldFacts.from_world(world), RecordStore(RECORD_TABLES), HiddenLog())


def rows(recorder: Recorder, table: str) -> list[tuple]:
    return [tuple(r) for r in recorder.records.frame(table).itertuples(index=False)]


def test_the_static_tables_list_every_machine_and_product(recorder):
    recorder.static()
    devices, catalog = recorder.records.frame("devices"), recorder.records.frame("catalog")
    assert devices["device_id"].tolist() == ["CN_WORKSITE_01", "CN_CAMPUS_01", "CN_RESIDENTIAL_01"]
    assert devices["capacity"].tolist() == [200, 200, 200]
    assert len(catalog) == 12 and catalog.iloc[1][["sku_id", "ref_price", "unit_cost"]].tolist() == [
        "SKU0002",
        9.0,
        4.14,
    ]


def test_an_order_shows_its_promise_and_hides_its_actual_lead_time(recorder):
    order = inv.Order(7, k=1, qty=4, unit_cost_fen=414, supplier_id="default", placed_day=2, eta_day=5, arrival_day=6)
    recorder.order(order, lead=4)
    recorder.arrivals(6, [Arrival(7, "SKU0002", 4, 96)])
    recorder.flush()
    assert rows(recorder, "orders") == [(7, 2, "SKU0002", 4, 4.14, "default", 5, 6)]
    assert rows(recorder, "arrivals") == [(6, 7, "SKU0002", 4, 96)]
    assert recorder.hidden.frame("lead_times").values.tolist() == [[7, 2, 4, 6]]


def test_prices_discards_and_shelf_events(recorder):
    recorder.price_change(3, 1, 0, 300, 250)
    recorder.discard(3, 2, 10, 4, 6 * 195)
    recorder.shelf_event(3, 2, 0, "restock", 12, 0)
    recorder.arrivals(3, [])  # no arrival: no row, no update
    recorder.flush()
    assert rows(recorder, "price_changes") == [(3, "CN_CAMPUS_01", "SKU0001", 3.0, 2.5)]
    assert rows(recorder, "discards") == [(3, "SKU0003", 10, 4, 11.7)]
    assert rows(recorder, "shelf_events") == [(3, "CN_RESIDENTIAL_01", "SKU0001", "restock", 12, 0)]
    assert rows(recorder, "arrivals") == []

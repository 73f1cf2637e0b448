"""The panel's cells on hand-made records: counts, sales since the count, the sales rule, prices, machine blocks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from autovend.calibration.cells import Keys, attach_sales, known_shelves, machine_blocks, sales_rule_shelves

START = pd.Timestamp("2024-06-01")
N_DAYS = 8
KEYS = Keys(n_products=3, n_days=N_DAYS)


def _sales(rows: list[tuple[int, int, int, int]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["m", "k", "d", "units"]).sort_values(["m", "k", "d"], ignore_index=True)
    return frame.assign(revenue=frame["units"] * 3.0)


def _at(day: int, hour: int) -> pd.Timestamp:
    return START + pd.Timedelta(days=day, hours=hour)


def _cells(frame: pd.DataFrame, k: int) -> list[tuple[int, int, float, bool, bool]]:
    rows = frame[frame["k"] == k]
    return [(int(r.d), int(r.units), float(r.q), bool(r.censored), bool(r.known)) for r in rows.itertuples(index=False)]


def test_known_shelves_follow_the_last_count_of_each_visit_day_minus_units_sold_since():
    # machine 0: visits on day 1 (product 0: 5 units, product 1: 2) and day 5 (an early count of product 1,
    # then the day's last, full count holding product 2 only: products 0 and 1 are off the shelf from then)
    counts = [(1, 9, 0, 5), (1, 9, 1, 2), (5, 8, 1, 4), (5, 10, 2, 3)]
    inv = pd.DataFrame(
        {
            "m": 0,
            "k": [k for _, _, k, _ in counts],
            "ts": [_at(d, h) for d, h, _, _ in counts],
            "shelf_qty": [q for _, _, _, q in counts],
        }
    )
    visits = inv[["m", "ts"]].drop_duplicates()
    sales = _sales([(0, 0, 0, 1), (0, 0, 1, 2), (0, 0, 2, 3), (0, 0, 4, 1), (0, 0, 6, 1)])
    cells, cap = known_shelves(sales, inv, visits, START, KEYS)
    nan = float("nan")
    got = _cells(cells, 0)
    # day 0: before the first visit, shelf unknown; day 1: 5 on the shelf, 2 sold; day 2: 3 left, 3 sold
    # (sold out); day 3: empty, no cell; days 4 and 6: a sale from an empty shelf held at least the unit sold
    expected = [(0, 1, nan, False, False), (1, 2, 5.0, False, True), (2, 3, 3.0, True, True)]
    expected += [(4, 1, 1.0, True, True), (6, 1, 1.0, True, True)]
    assert [c[:2] for c in got] == [c[:2] for c in expected]
    np.testing.assert_array_equal([c[2] for c in got], [c[2] for c in expected])
    assert [c[3:] for c in got] == [c[3:] for c in expected]
    # product 1: two units on days 1 to 4, unsold; gone after day 5's last count
    assert _cells(cells, 1) == [(d, 0, 2.0, False, True) for d in (1, 2, 3, 4)]
    # product 2: three units from day 5 to the panel's end
    assert _cells(cells, 2) == [(d, 0, 3.0, False, True) for d in (5, 6, 7)]
    assert cap == {0: 7.0}  # the largest count: 5 + 2 on day 1


def test_sales_rule_offers_a_product_between_sales_at_most_gap_days_apart():
    keys = Keys(n_products=2, n_days=40)
    sales = _sales([(1, 0, 0, 2), (1, 0, 3, 1), (1, 0, 20, 1), (1, 1, 5, 1), (1, 1, 6, 4)])
    cells = sales_rule_shelves(sales, 14, keys)
    on = cells[cells["k"] == 0]
    assert list(on["d"]) == [0, 1, 2, 3, 20]  # 3 -> 20 is 17 days: not bridged
    assert list(on["units"]) == [2, 0, 0, 1, 1]
    assert list(cells.loc[cells["k"] == 1, "d"]) == [5, 6]
    assert cells["q"].isna().all() and not cells["known"].any() and not cells["censored"].any()


def test_prices_carry_forward_then_backward_within_a_machine_and_product():
    keys = Keys(n_products=2, n_days=10)
    sales = pd.DataFrame({"m": [0, 0], "k": [0, 0], "d": [2, 5], "units": [2, 1], "revenue": [7.0, 4.0]})
    cells = sales_rule_shelves(sales, 3, keys)  # days 2 to 5
    # a day before the first sale, and a product that never sold at the machine
    extra = pd.DataFrame({"m": [0, 0], "k": [0, 1], "d": [1, 4], "units": [0, 0], "q": np.nan, "censored": False})
    out = attach_sales(
        pd.concat([cells, extra.assign(known=False)], ignore_index=True), sales, pd.DataFrame({"ref_price": [3.0, 9.0]})
    )
    assert list(zip(out["k"], out["d"], strict=True)) == [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 4)]
    # 7 / 2 charged on day 2, carried back to day 1 and forward to days 3-4; 4 / 1 on day 5; the reference price
    assert list(out["price"]) == [3.5, 3.5, 3.5, 3.5, 4.0, 9.0]
    assert list(out["revenue"]) == [0.0, 7.0, 0.0, 0.0, 4.0, 0.0]


def test_machine_blocks_cut_before_a_machine_that_would_overflow_and_never_leave_a_block_without_rows(monkeypatch):
    from autovend.calibration import cells

    monkeypatch.setattr(cells, "BLOCK_ROWS", 10)
    assert machine_blocks(np.array([4, 4, 4, 0, 12, 0, 0, 3])) == [(0, 2), (2, 4), (4, 7), (7, 8)]
    assert machine_blocks(np.array([4, 4, 4]), size=5) == [(0, 1), (1, 2), (2, 3)]
    assert machine_blocks(np.zeros(3, dtype=np.int64)) == [(0, 3)]

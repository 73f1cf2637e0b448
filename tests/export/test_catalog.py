import numpy as np
import pandas as pd
import pytest

from autovend.errors import ExportError
from autovend.export.catalog import CATALOG_EXPORT_COLUMNS, build_catalog, is_perishable, unit_costs

NAN = float("nan")

# sku, name, l1, l2, ref_price, unit_cost, shelf_life_days  (margin of the source cost in the comment)
SOURCE = [
    ("W1", "Water", "drinks", "bottled_water", 3.00, 1.95, 90),  # 35%: in band, kept
    ("W2", "Water big", "drinks", "bottled_water", 4.00, 1.00, 365),  # 75%: out of band; 365 -> 90
    ("T1", "", "drinks", "tea", 5.00, NAN, 30),  # no cost; no name
    ("D1", "Milk", "drinks", "dairy_drinks", 6.00, 3.90, NAN),  # 35% kept; no life, subcategory 2 x 30
    ("D2", "Yogurt", "drinks", "dairy_drinks", 7.00, 4.55, 20),  # 35% kept; 20 -> 30
    ("D3", "Kefir", "drinks", "dairy_drinks", 7.00, 4.55, 45),  # 45 -> 30
    ("C1", "Chips", "snacks", "chips", 6.00, 2.70, 180),  # 55% kept; 180 -> 90
    ("C2", "Chips XL", "snacks", "chips", 8.00, 4.80, NAN),  # 40%: out of band; subcategory -> 90
    ("B1", "Bread", "snacks", "bread_cakes", 4.50, NAN, NAN),  # bread, no life anywhere -> 30
    ("N1", "Nuts", "snacks", "nuts", 9.00, 4.05, NAN),  # 55% kept; nuts, no life anywhere -> 90
    ("F1", "Ice", "frozen", "ice_cream", 5.00, NAN, 46),  # other band 40-50%; 46 -> 90
    ("X1", "Not kept", "drinks", "tea", 3.00, 1.00, 3),  # in the source only: votes for tea
]


def source_products() -> pd.DataFrame:
    cols = ["sku_id", "name", "category_l1", "category_l2", "ref_price", "unit_cost", "shelf_life_days"]
    frame = pd.DataFrame(SOURCE, columns=cols)
    frame["name"] = frame["name"].replace("", pd.NA).astype("str")
    return frame


def kept(skus: list[str] | None = None) -> pd.DataFrame:
    src = source_products().set_index("sku_id")
    skus = skus or [s for s in src.index if s != "X1"]
    return src.loc[skus, ["category_l1", "category_l2"]].reset_index()


@pytest.fixture(scope="module")
def catalog() -> pd.DataFrame:
    return build_catalog(kept(), source_products(), seed=11).set_index("sku_id")


def margin(cat: pd.DataFrame) -> pd.Series:
    return 1.0 - cat["unit_cost"] / cat["ref_price"]


def test_columns_order_and_names(catalog):
    assert list(catalog.reset_index().columns) == CATALOG_EXPORT_COLUMNS
    assert list(catalog.index) == ["W1", "W2", "T1", "D1", "D2", "D3", "C1", "C2", "B1", "N1", "F1"]
    assert catalog.loc["T1", "name"] == "T1"  # no name in the source: the sku_id
    assert catalog.loc["W1", "name"] == "Water"
    assert catalog.loc["W2", "ref_price"] == 4.00


def test_in_band_source_costs_are_kept_exactly(catalog):
    for sku, cost in {"W1": 1.95, "D1": 3.90, "D2": 4.55, "C1": 2.70, "N1": 4.05}.items():
        assert catalog.loc[sku, "unit_cost"] == cost
        assert catalog.loc[sku, "unit_cost_source"] == "source"


def test_other_costs_are_drawn_in_their_band_and_rounded_to_the_fen(catalog):
    drawn = catalog[catalog["unit_cost_source"] == "margin_draw"]
    assert sorted(drawn.index) == ["B1", "C2", "F1", "T1", "W2"]
    bands = {"drinks": (0.30, 0.40), "snacks": (0.50, 0.60), "frozen": (0.40, 0.50)}
    for sku, row in catalog.iterrows():
        lo, hi = bands[row["category_l1"]]
        m = 1.0 - row["unit_cost"] / row["ref_price"]
        assert lo - 1e-9 <= m <= hi + 1e-9, (sku, m)
        assert round(row["unit_cost"] * 100) == pytest.approx(row["unit_cost"] * 100, abs=1e-6)


def test_shelf_lives_follow_the_rules(catalog):
    expected = {
        "W1": (90, "source"),
        "W2": (90, "mapped"),
        "T1": (30, "source"),
        "D1": (30, "subcategory"),  # dairy_drinks in the source: 20 -> 30, 45 -> 30
        "D2": (30, "mapped"),
        "D3": (30, "mapped"),
        "C1": (90, "mapped"),
        "C2": (90, "subcategory"),  # chips: 180 -> 90
        "B1": (30, "default"),  # bread is perishable
        "N1": (90, "default"),
        "F1": (90, "mapped"),
    }
    got = {s: (int(r["shelf_life_days"]), r["shelf_life_source"]) for s, r in catalog.iterrows()}
    assert got == expected
    assert set(catalog["shelf_life_days"]) <= {30, 90}


def test_subcategory_majority_ties_go_to_30():
    src = source_products()
    src.loc[src["sku_id"] == "D3", "shelf_life_days"] = 90  # dairy_drinks now 30 (D2) vs 90 (D3)
    cat = build_catalog(kept(["D1"]), src, seed=0)
    assert cat["shelf_life_days"].tolist() == [30]


def test_same_seed_same_draws_other_seed_other_draws():
    a = build_catalog(kept(), source_products(), seed=11)
    b = build_catalog(kept(), source_products(), seed=11)
    c = build_catalog(kept(), source_products(), seed=12)
    pd.testing.assert_frame_equal(a, b)
    drawn = a["unit_cost_source"] == "margin_draw"
    assert (a.loc[drawn, "unit_cost"] != c.loc[drawn, "unit_cost"]).any()
    assert (a.loc[~drawn, "unit_cost"] == c.loc[~drawn, "unit_cost"]).all()


def test_a_products_draw_does_not_depend_on_the_other_products():
    full = build_catalog(kept(), source_products(), seed=5).set_index("sku_id")
    src = source_products()
    src.loc[src["sku_id"] == "W1", "unit_cost"] = NAN  # W1 is now drawn too
    changed = build_catalog(kept(), src, seed=5).set_index("sku_id")
    assert changed.loc["W2", "unit_cost"] == full.loc["W2", "unit_cost"]
    assert changed.loc["W1", "unit_cost_source"] == "margin_draw"


def test_custom_margin_bands():
    cat = build_catalog(
        kept(),
        source_products(),
        seed=1,
        margins={"drinks": (0.2, 0.2), "snacks": (0.5, 0.6)},
        other_margin=(0.1, 0.1),
    ).set_index("sku_id")
    assert cat.loc["T1", "unit_cost"] == 4.00  # 5.00 at a 20% margin
    assert cat.loc["F1", "unit_cost"] == 4.50  # frozen: other band 10%


def test_tiny_prices_never_cost_nothing():
    rng = np.random.default_rng(0)
    cost, kept_ = unit_costs(np.array([0.01, 0.05, 0.07]), np.full(3, np.nan), np.full(3, 0.3), np.full(3, 0.4), rng)
    assert not kept_.any()
    assert (cost >= 0.01).all()
    assert cost[1] == 0.03  # 0.05 x (1 - [0.3, 0.4]) = [0.03, 0.035]: the one fen amount in the band


def test_kept_product_missing_from_the_source_is_refused():
    src = source_products()
    with pytest.raises(ExportError, match="not in the source's products table"):
        build_catalog(kept(), src[src["sku_id"] != "C1"], seed=0)


@pytest.mark.parametrize(
    ("name", "perishable"),
    [("dairy_drinks", True), ("bread_cakes", True), ("Fresh_Fruit", True), ("chips", False), ("tea", False)],
)
def test_perishable_names(name, perishable):
    assert is_perishable(name) is perishable

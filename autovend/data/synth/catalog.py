"""The synthetic operator's catalog: plausible drinks and snacks sold in Shanghai vending machines."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from autovend.rng import stream


@dataclass(frozen=True)
class Subcategory:
    """A subcategory of the generated catalog and the truth of its demand level."""

    category_l1: str
    category_l2: str
    n: int  # number of SKUs
    price: tuple[float, float]  # reference price range, CNY
    margin: tuple[float, float]  # gross margin range
    life_30_share: float  # share of SKUs with a 30-day shelf life (else 90)
    gamma: float  # truth subcategory coefficient (geometric mean 1 within category_l1 after normalisation)
    brands: tuple[str, ...]
    variants: tuple[str, ...]
    sizes: tuple[str, ...]
    kept: bool = True


DRINK_MARGIN = (0.30, 0.40)
SNACK_MARGIN = (0.50, 0.60)

SUBCATEGORIES: tuple[Subcategory, ...] = (
    Subcategory(
        "drinks",
        "bottled_water",
        45,
        (2.0, 4.0),
        DRINK_MARGIN,
        0.0,
        1.55,
        (
            "Nongfu Spring",
            "C'estbon",
            "Wahaha",
            "Ganten",
            "Evian",
            "Master Kong",
            "Yili Spring",
            "Baisui Shan",
        ),
        ("Natural Water", "Purified Water", "Mineral Water", "Soda Water", "Alkaline Water", "Lemon Water"),
        ("350ml", "550ml", "570ml", "1.5L"),
    ),
    Subcategory(
        "drinks",
        "carbonated",
        120,
        (3.0, 6.0),
        DRINK_MARGIN,
        0.0,
        1.35,
        (
            "Coca-Cola",
            "Pepsi",
            "Sprite",
            "Fanta",
            "7Up",
            "Mirinda",
            "Genki Forest",
            "Arctic Ocean",
            "Schweppes",
            "Mountain Dew",
            "Jianlibao",
            "Asia",
        ),
        (
            "Original",
            "Zero Sugar",
            "Lemon",
            "Orange",
            "Grape",
            "Peach Sparkling",
            "Lime Mint",
            "Cherry",
            "Ginger Ale",
            "Cream Soda",
            "Lychee Sparkling",
            "White Peach",
        ),
        ("330ml", "500ml", "600ml", "1L"),
    ),
    Subcategory(
        "drinks",
        "tea_drinks",
        130,
        (3.5, 6.5),
        DRINK_MARGIN,
        0.0,
        1.45,
        (
            "Master Kong",
            "Uni-President",
            "Oriental Leaf",
            "Suntory",
            "Lipton",
            "ChaPi",
            "Wahaha",
            "Nongfu Spring",
            "Genki Forest",
            "Heytea",
        ),
        (
            "Jasmine Green Tea",
            "Iced Black Tea",
            "Oolong Tea",
            "Lemon Tea",
            "Honey Citron Tea",
            "Milk Tea",
            "Barley Tea",
            "Peach Oolong",
            "Osmanthus Oolong",
            "Pu-erh Tea",
            "Chrysanthemum Tea",
            "Jasmine Honey Tea",
            "Sugar-free Green Tea",
        ),
        ("450ml", "500ml", "900ml"),
    ),
    Subcategory(
        "drinks",
        "juice",
        95,
        (4.0, 8.0),
        DRINK_MARGIN,
        0.15,
        0.80,
        (
            "Minute Maid",
            "Huiyuan",
            "Zeus",
            "Tropicana",
            "Uni-President",
            "Master Kong",
            "Nongfu Spring",
            "Weichuan",
        ),
        (
            "Orange Juice",
            "Apple Juice",
            "Grape Juice",
            "Mango Nectar",
            "Coconut Water",
            "Pear Juice",
            "Hawthorn Juice",
            "Mixed Fruit",
            "NFC Orange",
            "Kiwi Juice",
            "Plum Drink",
            "Tomato Juice",
        ),
        ("300ml", "420ml", "450ml", "1L"),
    ),
    Subcategory(
        "drinks",
        "coffee_drinks",
        105,
        (5.0, 12.0),
        DRINK_MARGIN,
        0.0,
        0.95,
        (
            "Nescafe",
            "Starbucks",
            "Costa",
            "UCC",
            "Georgia",
            "Luckin",
            "Nongfu Spring",
            "Coffee Box",
            "Saturnbird",
        ),
        (
            "Latte",
            "Americano",
            "Cappuccino",
            "Mocha",
            "Cold Brew",
            "Coconut Latte",
            "Caramel Macchiato",
            "Black Coffee",
            "Vanilla Latte",
            "Oat Latte",
            "Espresso",
        ),
        ("210ml", "250ml", "268ml", "300ml"),
    ),
    Subcategory(
        "drinks",
        "energy_sports",
        80,
        (4.5, 8.0),
        DRINK_MARGIN,
        0.0,
        0.85,
        (
            "Red Bull",
            "Dongpeng",
            "Monster",
            "Gatorade",
            "Pocari Sweat",
            "Mizone",
            "Alien",
            "Burn",
            "Wei Chuan",
        ),
        (
            "Energy Drink",
            "Sugar Free",
            "Electrolyte Water",
            "Citrus",
            "Blueberry",
            "Lemon",
            "Tropical",
            "Original Sports",
            "Peach Electrolyte",
        ),
        ("250ml", "330ml", "500ml", "600ml"),
    ),
    Subcategory(
        "drinks",
        "dairy_drinks",
        90,
        (4.0, 9.0),
        DRINK_MARGIN,
        0.8,
        0.95,
        ("Mengniu", "Yili", "Bright Dairy", "Wahaha", "Yakult", "Jun Le Bao", "Anmuxi", "Want Want"),
        (
            "Pure Milk",
            "Chocolate Milk",
            "Strawberry Milk",
            "Yogurt Drink",
            "Probiotic Drink",
            "Banana Milk",
            "Low-fat Milk",
            "Greek Yogurt Drink",
            "Red Date Milk",
            "Coffee Milk",
        ),
        ("100ml", "200ml", "250ml", "330ml"),
    ),
    Subcategory(
        "drinks",
        "plant_protein",
        45,
        (4.0, 7.0),
        DRINK_MARGIN,
        0.2,
        0.60,
        ("Vitasoy", "Liuliu", "Yinlu", "Coconut Palm", "Oatly", "Dali Garden", "Jiajia"),
        (
            "Soy Milk",
            "Walnut Milk",
            "Coconut Milk",
            "Oat Milk",
            "Peanut Milk",
            "Almond Milk",
            "Black Soy Milk",
        ),
        ("240ml", "250ml", "310ml", "1L"),
    ),
    Subcategory(
        "snacks",
        "chips_puffed",
        115,
        (5.0, 12.0),
        SNACK_MARGIN,
        0.0,
        1.25,
        (
            "Lay's",
            "Pringles",
            "Oishi",
            "Calbee",
            "Doritos",
            "Cheetos",
            "Want Want",
            "Shang Hao Jia",
            "Haoliyou",
        ),
        (
            "Original",
            "Cucumber",
            "Tomato",
            "BBQ",
            "Spicy Crayfish",
            "Seaweed",
            "Sour Cream Onion",
            "Cheese",
            "Honey Butter",
            "Shrimp Crackers",
            "Corn Puffs",
            "Mala Hotpot",
        ),
        ("40g", "70g", "104g", "110g"),
    ),
    Subcategory(
        "snacks",
        "biscuits_cookies",
        100,
        (4.0, 10.0),
        SNACK_MARGIN,
        0.0,
        1.05,
        ("Oreo", "Pocky", "Want Want", "Glico", "Pan Pan", "Jacob's", "Orion", "Nabisco", "Lotte"),
        (
            "Chocolate Sandwich",
            "Strawberry Sticks",
            "Rice Crackers",
            "Cream Crackers",
            "Egg Rolls",
            "Soda Crackers",
            "Butter Cookies",
            "Matcha Sticks",
            "Chocolate Pie",
            "Digestive",
        ),
        ("45g", "55g", "97g", "120g"),
    ),
    Subcategory(
        "snacks",
        "chocolate_candy",
        90,
        (3.0, 12.0),
        SNACK_MARGIN,
        0.0,
        0.80,
        (
            "Dove",
            "Snickers",
            "M&M's",
            "KitKat",
            "Ferrero",
            "Alpenliebe",
            "Skittles",
            "Mentos",
            "Lotte",
            "Want Want",
        ),
        (
            "Milk Chocolate",
            "Dark Chocolate",
            "Peanut Bar",
            "Wafer Bar",
            "Fruit Chews",
            "Mint Gum",
            "Lollipop",
            "Gummy Bears",
            "Hazelnut Praline",
            "Hard Candy",
        ),
        ("20g", "35g", "40g", "51g"),
    ),
    Subcategory(
        "snacks",
        "nuts_seeds",
        50,
        (8.0, 18.0),
        SNACK_MARGIN,
        0.0,
        0.55,
        ("Three Squirrels", "Bestore", "Qiaqia", "Baicaowei", "Lyfen", "Ganyuan"),
        (
            "Mixed Nuts",
            "Cashews",
            "Pistachios",
            "Sunflower Seeds",
            "Macadamia",
            "Peanuts",
            "Almonds",
            "Broad Beans",
        ),
        ("25g", "50g", "75g", "160g"),
    ),
    Subcategory(
        "snacks",
        "meat_snacks",
        60,
        (6.0, 15.0),
        SNACK_MARGIN,
        0.0,
        0.70,
        ("Shuanghui", "Youyou", "Huangshanghuang", "Zhouheiya", "Kerchin", "Jinluo"),
        (
            "Beef Jerky",
            "Chicken Feet",
            "Duck Neck",
            "Ham Sausage",
            "Pork Floss",
            "Spicy Chicken Wings",
            "Quail Eggs",
            "Braised Tofu",
        ),
        ("30g", "50g", "80g", "100g"),
    ),
    Subcategory(
        "snacks",
        "spicy_strips",
        35,
        (3.0, 6.0),
        SNACK_MARGIN,
        0.0,
        1.15,
        ("Weilong", "Maiduoduo", "Yanjin", "Laoxiangxiang"),
        ("Spicy Strips", "Konjac Strips", "Kelp Strips", "Gluten Sticks", "Mushroom Bites"),
        ("60g", "106g", "260g"),
    ),
    Subcategory(
        "snacks",
        "instant_noodles",
        50,
        (5.0, 10.0),
        SNACK_MARGIN,
        0.0,
        0.90,
        ("Master Kong", "Nissin", "Uni-President", "Baixiang", "Jinmailang", "Samyang"),
        (
            "Braised Beef Noodles",
            "Pickled Cabbage Noodles",
            "Seafood Cup",
            "Spicy Chicken",
            "Tomato Egg",
            "Hot Chicken Ramen",
            "Wonton Soup",
        ),
        ("Cup", "Big Cup", "Bowl"),
    ),
    Subcategory(
        "snacks",
        "bread_cakes",
        60,
        (4.0, 10.0),
        SNACK_MARGIN,
        0.9,
        1.10,
        ("Mankattan", "Daliyuan", "Panpan", "Bimbo", "Toly", "Holiland"),
        (
            "Sliced Bread",
            "Swiss Roll",
            "Egg Custard Cake",
            "Croissant",
            "Red Bean Bun",
            "Cheese Bun",
            "Pork Floss Bread",
            "Mochi",
        ),
        ("60g", "80g", "100g", "150g"),
    ),
    Subcategory(
        "snacks",
        "jelly_pudding",
        30,
        (3.0, 8.0),
        SNACK_MARGIN,
        0.6,
        0.60,
        ("Xizhilang", "Strong", "Jinwa", "Ocean Fresh"),
        ("Fruit Jelly", "Konjac Jelly", "Milk Pudding", "Mango Pudding", "Lychee Jelly", "Peach Jelly Drink"),
        ("120g", "150g", "200g"),
    ),
    Subcategory(
        "snacks",
        "seaweed_dried_fruit",
        72,
        (5.0, 12.0),
        SNACK_MARGIN,
        0.0,
        0.60,
        ("Taokaenoi", "Bestore", "Three Squirrels", "Haitai", "Baicaowei", "Xinjiang Farm"),
        (
            "Crispy Seaweed",
            "Dried Mango",
            "Raisins",
            "Dried Hawthorn",
            "Freeze-dried Strawberry",
            "Red Dates",
            "Dried Kiwi",
            "Plum Candy",
            "Banana Chips",
        ),
        ("20g", "40g", "60g", "100g"),
    ),
    # Out of scope for the benchmark: sold from a separate chilled/frozen/goods compartment.
    Subcategory(
        "fresh_food",
        "rice_balls_sandwiches",
        36,
        (6.0, 15.0),
        (0.35, 0.45),
        1.0,
        1.0,
        ("FamilyMart Deli", "Lawson Kitchen", "Bianlifeng", "Ruixiang"),
        (
            "Tuna Rice Ball",
            "Ham Sandwich",
            "Egg Sandwich",
            "Chicken Wrap",
            "Sushi Roll",
            "Teriyaki Rice Ball",
            "Beef Burger",
            "Salad Cup",
            "Pork Dumplings",
        ),
        ("1 pc", "2 pcs"),
        kept=False,
    ),
    Subcategory(
        "frozen",
        "ice_cream",
        40,
        (3.0, 15.0),
        (0.40, 0.50),
        0.0,
        1.0,
        ("Wall's", "Magnum", "Haagen-Dazs", "Yili", "Mengniu", "Zhong Xue Gao", "Bright"),
        ("Vanilla Cone", "Chocolate Bar", "Red Bean Popsicle", "Mango Sorbet", "Matcha Cup", "Milk Popsicle"),
        ("60g", "75g", "90g"),
        kept=False,
    ),
    Subcategory(
        "daily_goods",
        "personal_care",
        28,
        (2.0, 20.0),
        (0.50, 0.60),
        0.0,
        1.0,
        ("Vinda", "Tempo", "Breeze", "3M", "Durex", "Hengan"),
        ("Tissues", "Wet Wipes", "Face Masks", "Umbrella", "Phone Cable", "Hand Sanitizer", "Condoms"),
        ("1 pack", "3 packs"),
        kept=False,
    ),
)

KEPT_SUBCATEGORIES: tuple[str, ...] = tuple(s.category_l2 for s in SUBCATEGORIES if s.kept)


def _round_half(x: float | np.ndarray) -> np.ndarray:
    """Round prices to the nearest 0.5 CNY (vending price points)."""
    return np.round(np.asarray(x) * 2.0) / 2.0


def build_catalog(seed: int, omega_sigma: float) -> pd.DataFrame:
    """The products table with the truth columns omega and gamma (and `kept`).

    Names are unique; reference prices are on 0.5 CNY points; unit costs follow the subcategory's gross
    margin range; shelf lives are 30 or 90 days for kept products. omega is lognormal within the
    subcategory, rescaled to arithmetic mean 1 (the truth's normalisation).
    """
    rng = stream(seed, "catalog")
    rows = []
    sku = 0
    for sub in SUBCATEGORIES:
        combos = [(b, v, s) for b in sub.brands for v in sub.variants for s in sub.sizes]
        if len(combos) < sub.n:
            raise ValueError(f"{sub.category_l2}: {len(combos)} name combinations for {sub.n} SKUs")
        pick = rng.choice(len(combos), size=sub.n, replace=False)
        size_rank = {s: i for i, s in enumerate(sub.sizes)}
        z = rng.standard_normal(sub.n)
        omega = np.exp(omega_sigma * z)
        omega = omega / omega.mean()
        lo, hi = sub.price
        for j, idx in enumerate(pick):
            brand, variant, size = combos[idx]
            pos = (size_rank[size] + rng.uniform(0.0, 1.0)) / len(sub.sizes)
            price = float(_round_half(lo + (hi - lo) * pos))
            price = min(max(price, lo), hi)
            margin = rng.uniform(*sub.margin)
            if sub.kept:
                life = 30 if rng.random() < sub.life_30_share else 90
            else:
                life = {"fresh_food": 3, "frozen": 180, "daily_goods": 720}[sub.category_l1]
            sku += 1
            rows.append(
                {
                    "sku_id": f"SKU{sku:05d}",
                    "name": f"{brand} {variant} {size}",
                    "category_l1": sub.category_l1,
                    "category_l2": sub.category_l2,
                    "ref_price": price,
                    "unit_cost": round(price * (1.0 - margin), 2),
                    "shelf_life_days": life,
                    "omega": float(omega[j]),
                    "gamma": sub.gamma,
                    "kept": sub.kept,
                }
            )
    return pd.DataFrame(rows)

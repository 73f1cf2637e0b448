"""The handlers of the tools that read: catalog, categories, warehouse, devices, sales, SQL, calendar, weather.

Each is `handler(ctx, args, raw) -> JSON-ready dict`, or `ToolError` for a bad call. Money is CNY rounded to
the fen; tables use the {"columns": [...], "rows": [[...]]} form of the observation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from autovend.distinct import distinct
from autovend.sim.money import from_fen
from autovend.tools.context import ToolContext, ToolError
from autovend.tools.handlers.actions import settled_summary
from autovend.tools.schemas import (
    CALENDAR_DAYS_DEFAULT,
    DEFAULT_PAGE_SIZE,
    DEFAULT_WINDOW,
    GetCalendarArgs,
    GetCatalogArgs,
    GetCategoriesArgs,
    GetDeviceDetailArgs,
    GetSalesHistoryArgs,
    GetSkuAcrossDevicesArgs,
    GetWarehouseArgs,
    NoArgs,
    QuerySqlArgs,
    quote,
)
from autovend.tools.suppliers import supplier_rows
from autovend.tools.views import money, round2, rows_of, table

TOP_PRODUCTS = 20  # products listed by get_sales_history


def _device(ctx: ToolContext, device_id: str) -> int:
    try:
        return ctx.sim.device_index(device_id)
    except KeyError:
        ids = ", ".join(ctx.sim.device_ids)
        raise ToolError(
            f"device_id {quote(device_id)} is not one of the machines; use one of: {ids}", "not_found"
        ) from None


def _sku(ctx: ToolContext, sku_id: str) -> int:
    try:
        return ctx.sim.sku_index(sku_id)
    except KeyError:
        raise ToolError(
            f"sku_id {quote(sku_id)} is not in the catalog (ids look like {ctx.sim.sku_ids[0]!r}); "
            "find products with get_catalog",
            "not_found",
        ) from None


def _page(total: int, page: int | None, page_size: int | None) -> tuple[int, int, int, int]:
    """(page, page_size, first row, number of pages)."""
    size = page_size or DEFAULT_PAGE_SIZE
    number = page or 1
    pages = max(1, -(-total // size))
    return number, size, (number - 1) * size, pages


def _paged(total: int, page: int, size: int, pages: int) -> dict[str, Any]:
    out: dict[str, Any] = {"page": page, "page_size": size, "pages": pages, "total": total}
    if page > pages and total:
        out["note"] = f"page {page} is past the last page ({pages}); ask for page 1-{pages}"
    return out


# ------------------------------------------------------------------------------------------ queries


CATALOG_COLUMNS = [
    "sku_id",
    "name",
    "category_l1",
    "category_l2",
    "ref_price",
    "unit_cost",
    "ref_margin",
    "shelf_life_days",
    "warehouse_units",
    "in_transit_units",
]


def get_catalog(ctx: ToolContext, args: GetCatalogArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Search the catalog with filters, a sort order and pages."""
    cat = ctx.views.catalog
    stock = ctx.views.stock()
    mask = np.ones(len(cat.sku_ids), dtype=bool)
    notes = []
    if args.query:
        q = args.query.strip().lower()
        mask &= np.fromiter((q in s for s in cat.search_text), dtype=bool, count=len(cat.search_text))
    for name, col in (("category_l1", cat.category_l1), ("category_l2", cat.category_l2)):
        value = getattr(args, name)
        if value is not None:
            hit = np.char.lower(col.astype(str)) == value.strip().lower()
            if not hit.any():
                known = ", ".join(sorted(set(col)))
                notes.append(f"no {name} {quote(value)}; known values: {known}")
            mask &= hit
    if args.price_min is not None:
        mask &= cat.ref_price >= args.price_min
    if args.price_max is not None:
        mask &= cat.ref_price <= args.price_max
    if args.in_warehouse_only:
        mask &= stock.wh_units > 0
    idx = np.flatnonzero(mask)
    sort = args.sort_by or "catalog"
    if sort == "price_asc":
        idx = idx[np.argsort(cat.ref_price[idx], kind="stable")]
    elif sort == "price_desc":
        idx = idx[np.argsort(-cat.ref_price[idx], kind="stable")]
    elif sort == "margin":
        idx = idx[np.argsort(-cat.ref_margin[idx], kind="stable")]
    page, size, first, pages = _page(len(idx), args.page, args.page_size)
    rows = [
        [
            cat.sku_ids[k],
            cat.names[k],
            cat.category_l1[k],
            cat.category_l2[k],
            float(cat.ref_price[k]),
            float(cat.unit_cost[k]),
            float(cat.ref_margin[k]),
            int(cat.shelf_life[k]),
            int(stock.wh_units[k]),
            int(stock.transit_units[k]),
        ]
        for k in idx[first : first + size].tolist()
    ]
    out = {**_paged(len(idx), page, size, pages), "sort_by": sort, **table(CATALOG_COLUMNS, rows)}
    if notes:
        out["note"] = "; ".join(notes)
    suppliers = supplier_rows(ctx.sim.world, ctx.sim.day)
    if suppliers is not None:
        out["suppliers"] = suppliers
    return out


def get_categories(ctx: ToolContext, args: GetCategoriesArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Per subcategory: number of products, span of reference prices, median reference margin."""
    cats = ctx.views.catalog.categories
    if args.category_l1 is not None:
        want = args.category_l1.strip().lower()
        part = cats[cats["category_l1"].str.lower() == want]
        if part.empty:
            known = ", ".join(sorted(cats["category_l1"].unique()))
            raise ToolError(f"category_l1 {quote(args.category_l1)} does not exist; use one of: {known}", "not_found")
        cats = part
    rows = [
        [str(a), str(b), int(n), float(lo), float(hi), round(float(med), 4)]
        for a, b, n, lo, hi, med in cats.itertuples(index=False)
    ]
    cols = ["category_l1", "category_l2", "n_skus", "ref_price_min", "ref_price_max", "median_ref_margin"]
    return {"n_skus": int(cats["n_skus"].sum()), **table(cols, rows)}


WAREHOUSE_COLUMNS = [
    "sku_id",
    "name",
    "units",
    "expired_units",
    "expiring_7d_units",
    "next_expiry_day",
    "unit_cost",
    "value_at_cost",
]


def get_warehouse(ctx: ToolContext, args: GetWarehouseArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Warehouse stock by product (catalog order), with cost and expiry; paginated."""
    cat = ctx.views.catalog
    stock = ctx.views.stock()
    idx = np.flatnonzero(stock.wh_units)
    page, size, first, pages = _page(len(idx), args.page, args.page_size)
    sel = idx[first : first + size]
    units_sel, expired_sel = stock.wh_units[sel], stock.wh_expired[sel]
    rows = rows_of(
        cat.sku_arr[sel].tolist(),
        cat.names[sel].tolist(),
        units_sel.tolist(),
        expired_sel.tolist(),
        stock.wh_expiring[sel].tolist(),
        [d or None for d in stock.wh_next_expiry[sel].tolist()],
        cat.unit_cost[sel].tolist(),
        [money(v) for v in ((units_sel - expired_sel) * cat.unit_cost[sel]).tolist()],
    )
    units = int(stock.wh_units.sum())
    totals = {
        "units": units,
        "n_skus": len(idx),
        "value_at_cost": from_fen(ctx.sim.balance().warehouse_fen),
        "rent_per_day": money(units * ctx.sim.world.economics.warehouse_rent_per_unit_day),
        "expired_units": int(stock.wh_expired.sum()),
        "expiring_7d_units": int(stock.wh_expiring.sum()),
    }
    return {
        "day": ctx.sim.day,
        "totals": totals,
        **_paged(len(idx), page, size, pages),
        **table(WAREHOUSE_COLUMNS, rows),
    }


DEVICE_PRODUCT_COLUMNS = [
    "sku_id",
    "name",
    "category_l2",
    "units",
    "expired_units",
    "expiring_7d_units",
    "next_expiry_day",
    "price",
    "ref_price",
    "sold",
    "revenue",
    "sold_per_day",
]


def get_device_detail(ctx: ToolContext, args: GetDeviceDetailArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """One machine: its shelf by product (units, expiry, price) and its sales in the window."""
    sim, views = ctx.sim, ctx.views
    m = _device(ctx, args.device_id)
    n = args.window_days or DEFAULT_WINDOW
    cat = views.catalog
    stock = views.stock()
    K = sim.n_products
    win = views.sales.window(n).of_machine(m)
    sold = np.bincount(win.product, weights=win.units, minlength=K).astype(np.int64)
    revenue = np.bincount(win.product, weights=win.revenue, minlength=K)
    units = stock.shelf_units[m]
    price = stock.price_fen[m]
    expired, expiring, next_expiry = stock.machine_expiry(m)
    idx = np.flatnonzero((units > 0) | (sold > 0))
    rows = rows_of(
        cat.sku_arr[idx].tolist(),
        cat.names[idx].tolist(),
        cat.category_l2[idx].tolist(),
        units[idx].tolist(),
        expired[idx].tolist(),
        expiring[idx].tolist(),
        [d or None for d in next_expiry[idx].tolist()],
        (price[idx] / 100.0).tolist(),
        cat.ref_price[idx].tolist(),
        sold[idx].tolist(),
        round2(revenue[idx]),
        round2(sold[idx] / max(win.n_days, 1)),
    )
    other = np.flatnonzero((price != cat.ref_fen) & (units == 0) & (sold == 0))
    days = win.day - win.first
    daily_units = np.bincount(days, weights=win.units, minlength=win.n_days).astype(np.int64)
    daily_rev = np.bincount(days, weights=win.revenue, minlength=win.n_days)
    cap = int(sim.capacity[m])
    on_shelf = int(units.sum())
    return {
        "device_id": sim.device_ids[m],
        "location": views.locations[m],
        "site_type": views.site_types[m],
        "day": sim.day,
        "capacity": cap,
        "units_on_shelf": on_shelf,
        "free_capacity": cap - on_shelf,
        "n_skus": int(np.count_nonzero(units)),
        "expired_units": int(expired.sum()),
        "expiring_7d_units": int(expiring.sum()),
        "days_since_visit": views.days_since_visit()[m],
        "visited_today": sim.device_ids[m] in sim.visits_today(),
        "window_days": n,
        "days_covered": win.n_days,
        "units_sold": int(win.units.sum()),
        "revenue": money(win.revenue.sum()),
        "gross_profit": money(win.revenue.sum() - win.cost.sum()),
        "products": table(DEVICE_PRODUCT_COLUMNS, rows),
        "daily": table(
            ["day", "units_sold", "revenue"],
            rows_of(list(range(win.first, win.first + win.n_days)), daily_units.tolist(), round2(daily_rev)),
        ),
        "other_prices": table(
            ["sku_id", "price", "ref_price"],
            rows_of(cat.sku_arr[other].tolist(), (price[other] / 100.0).tolist(), cat.ref_price[other].tolist()),
        ),
    }


ACROSS_COLUMNS = [
    "device_id",
    "site_type",
    "location",
    "units",
    "expired_units",
    "expiring_7d_units",
    "price",
    "sold",
    "revenue",
    "sold_per_day",
]


def get_sku_across_devices(ctx: ToolContext, args: GetSkuAcrossDevicesArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """One product at every machine: stock, price and sales in the window, with site types."""
    sim, views = ctx.sim, ctx.views
    k = _sku(ctx, args.sku_id)
    n = args.window_days or DEFAULT_WINDOW
    cat = views.catalog
    stock = views.stock()
    M = sim.n_machines
    win = views.sales.window(n).of_product(k)
    sold = np.bincount(win.machine, weights=win.units, minlength=M)
    revenue = np.bincount(win.machine, weights=win.revenue, minlength=M)
    per_day = max(win.n_days, 1)
    mach = sim.world.machines
    rows = [
        [
            sim.device_ids[m],
            str(mach["site_type"].iat[m]),
            str(mach["location"].iat[m]),
            int(stock.shelf_units[m, k]),
            int(stock.shelf_expired[m, k]),
            int(stock.shelf_expiring[m, k]),
            stock.price_fen[m, k] / 100.0,
            int(sold[m]),
            money(revenue[m]),
            round(sold[m] / per_day, 2),
        ]
        for m in range(M)
    ]
    lo, hi = sim.price_band(cat.sku_ids[k])
    return {
        "sku_id": cat.sku_ids[k],
        "name": cat.names[k],
        "category_l1": cat.category_l1[k],
        "category_l2": cat.category_l2[k],
        "ref_price": float(cat.ref_price[k]),
        "unit_cost": float(cat.unit_cost[k]),
        "ref_margin": float(cat.ref_margin[k]),
        "shelf_life_days": int(cat.shelf_life[k]),
        "price_band": [lo, hi],
        "warehouse_units": int(stock.wh_units[k]),
        "warehouse_expired_units": int(stock.wh_expired[k]),
        "in_transit_units": int(stock.transit_units[k]),
        "day": sim.day,
        "window_days": n,
        "days_covered": win.n_days,
        "units_sold": int(win.units.sum()),
        "revenue": money(win.revenue.sum()),
        "devices": table(ACROSS_COLUMNS, rows),
    }


HISTORY_COLUMNS = [
    "day",
    "date",
    "weekday",
    "units_sold",
    "revenue",
    "gross_profit",
    "rent",
    "labor",
    "daily_fee",
    "expired_fine",
    "write_offs",
    "net",
    "visits",
    "net_assets",
]
TOP_COLUMNS = ["sku_id", "name", "units", "revenue", "gross_profit", "devices"]


def get_sales_history(ctx: ToolContext, args: GetSalesHistoryArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Network sales and costs by day, and the top 20 products by units sold in the window."""
    sim, views = ctx.sim, ctx.views
    n = args.window_days or DEFAULT_WINDOW
    reports = sim.reports[-n:] if sim.reports else ()
    rows = []
    for r in reports:
        s = settled_summary(r)
        rows.append(
            [
                s["day"],
                s["date"],
                r.info.weekday,
                s["units_sold"],
                s["revenue"],
                s["gross_profit"],
                s["rent"],
                s["labor"],
                s["daily_fee"],
                s["expired_fine"],
                money(s["expiry_writeoff"] + s["discard_writeoff"]),
                s["net"],
                len(r.visited),
                s["net_assets"],
            ]
        )
    totals: dict[str, Any] = {}
    for i, c in enumerate(HISTORY_COLUMNS[3:-1], start=3):
        total = sum(row[i] for row in rows)
        totals[c] = total if c in ("units_sold", "visits") else money(total)
    win = views.sales.window(n)
    K, M = sim.n_products, sim.n_machines
    units = np.bincount(win.product, weights=win.units, minlength=K)
    revenue = np.bincount(win.product, weights=win.revenue, minlength=K)
    cost = np.bincount(win.product, weights=win.cost, minlength=K)
    pairs = distinct(win.product * M + win.machine)
    n_dev = np.bincount(pairs // M, minlength=K)
    sold = np.flatnonzero(units > 0)
    order = sold[np.lexsort((sold, -revenue[sold], -units[sold]))][:TOP_PRODUCTS]
    cat = views.catalog
    top = [
        [
            cat.sku_ids[k],
            cat.names[k],
            int(units[k]),
            money(revenue[k]),
            money(revenue[k] - cost[k]),
            int(n_dev[k]),
        ]
        for k in order.tolist()
    ]
    return {
        "day": sim.day,
        "window_days": n,
        "days_covered": len(reports),
        "totals": totals,
        "daily": table(HISTORY_COLUMNS, rows),
        "top_products": table(TOP_COLUMNS, top),
    }


def query_sql(ctx: ToolContext, args: QuerySqlArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """One read-only SELECT over the operating records."""
    return ctx.sql.run(args.sql)


def get_calendar(ctx: ToolContext, args: GetCalendarArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Published holidays and makeup workdays from tomorrow to `days_ahead` days ahead."""
    sim = ctx.sim
    n = args.days_ahead or CALENDAR_DAYS_DEFAULT
    info = sim.today
    return {
        "today": {
            "day": sim.day,
            "date": info.date.isoformat(),
            "weekday": info.weekday,
            "is_workday": info.is_workday,
            "holiday_name": info.holiday_name or None,
        },
        "days_ahead": n,
        "until": sim.world.date_of(sim.day + n).isoformat(),
        "special_days": ctx.views.calendar.between(sim.day + 1, sim.day + n),
    }


def get_weather(ctx: ToolContext, args: NoArgs, raw: dict[str, Any]) -> dict[str, Any]:
    """Today's settlement weather and the forecast for the next seven days."""
    return {"day": ctx.sim.day, "days": ctx.views.weather.week(ctx.sim.day)}

"""The rule-based baseline: newsvendor targets, periodic order-up-to replenishment, sales-led assortment.

`BaselineAgent` is a deterministic operator that acts only through the tools of a `ToolSession`
and uses only what any agent can observe: the catalog, the calendar, the public rules of the
system prompt, the daily observation, and the operating records its own actions produce. It draws
no random numbers. Its settings are `BaselineConfig` (documented defaults, `config`).

A day, in order (each step's rules are in the module named after it; the pure decision rules are
functions of arrays that can be tested on their own):

1. *Observe* (`observe`). Yesterday's sales per machine and product (`query_sql` on `daily_sales`),
   the warehouse by product (`get_warehouse`), open orders by product (`query_sql` on `orders`).
   The agent keeps its own book of shelves, prices and exposure.
2. *Clean* (`clean`). Discard warehouse units that are expired or expire soon, and dead stock that
   is not worth its rent.
3. *Estimate* (`estimate`). Demand rates per machine and product from the rolling window, shrunk to
   pooled priors; the machine's sales shared among its products; negative-binomial variability.
4. *Prices* (`prices`). Crossover trials of one price multiplier per price group.
5. *Visits* (working days only; `visits`, `serve`). Each machine on a weekly cycle, or a shorter one
   when it earns more net of the visit fee; extra visits for expiring units or a low shelf; at a
   visit, expiring units come off, the assortment is reviewed and the shelf is filled to target.
6. *Targets* (`targets`). Order-up-to levels S = mu * H + z * sd_H per (machine, product), z from the
   newsvendor critical ratio, capped by shelf life and fitted to the machine's capacity.
7. *Procurement* (every day, remote and free; `procurement`). Echelon order-up-to per product over
   the machines that carry it, rounded to lots, within the cash floor.
8. *Assortment* (at visits; `assortment`). Drop poor sellers, explore untried products, swap in
   proven ones; the opening assortment spreads products over every subcategory.

`agent` orchestrates the steps; `setup` reads the day-1 facts; `state` holds what the agent
remembers; `calls` is the edge to the tools.
"""

from autovend.agents.baseline.agent import BaselineAgent
from autovend.agents.baseline.assortment import spread_quota, starter_assortment
from autovend.agents.baseline.config import BaselineConfig, load_baseline_config
from autovend.agents.baseline.estimate import dispersion
from autovend.agents.baseline.prices import crossover_arm, crossover_effect, price_fen
from autovend.agents.baseline.procurement import round_lots
from autovend.agents.baseline.targets import newsvendor_z, normal_loss, shelf_targets, unsold_probability

__all__ = [
    "BaselineAgent",
    "BaselineConfig",
    "crossover_arm",
    "crossover_effect",
    "dispersion",
    "load_baseline_config",
    "newsvendor_z",
    "normal_loss",
    "price_fen",
    "round_lots",
    "shelf_targets",
    "spread_quota",
    "starter_assortment",
    "unsold_probability",
]

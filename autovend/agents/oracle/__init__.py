"""The oracle: a PRIVILEGED reference policy that plans with the world's hidden demand model (a headroom bound).

`autovend run --agent oracle` runs it like any agent, through the same tools, runner and evaluation, so its
trajectory can be re-checked (`autovend verify`) and its numbers sit beside the others'. Unlike every other
agent it reads what the benchmark hides: the world's demand model (base attractions, no-purchase weights,
price elasticities, the calendar's demand factors), which the harness hands it by its code identity
(`OracleAgent.reveal`, called by `autovend.agents.identity.grant_hidden`); no session gives it to any agent
(`autovend.env.boundary`). It never reads the simulator's state, the demand shocks or the draws: it plans with
*expected* demand and sees the shelves, the warehouse and its orders through the tools only. Its runs are
marked `privileged` in run.json (by its entry point `autovend.agents.oracle:OracleAgent`, never by its name) and
labelled so in reports and leaderboards; it is a reference, not an entry: no agent can reach what it reads
through a session (tests/env/test_boundary.py).

What it plans (`plan`): per machine, the price multiplier, the assortment and the shelf targets with the
most expected gross profit per day net of visit fees; what it does each day (`agent`): discard expiring
stock, visit a machine when refilling it earns more before the next working day than the visit costs, and
order up to the shelves' targets plus a cover of expected sales.

It is not an upper bound in the strict sense (a better policy may exist: the shelves run down between
visits, demand is random, the plan is greedy), but a demanding reference: the normalised score
`(agent - hold) / (oracle - hold)` (`autovend.evaluation.headroom`) puts the hold policy at 0 and it at 1.
"""

from autovend.agents.oracle.agent import OracleAgent

__all__ = ["OracleAgent"]

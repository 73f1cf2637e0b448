"""`autovend verify RUN`: re-derive a run from what cannot lie and compare every file its folder holds.

A run is deterministic given its world, its seed and its tool calls: the simulator's demand draws depend only on
the seed, the day, the machine and the product, and every change of state is a tool call. A run folder is
untrusted input (nothing in it is unpickled or executed), so `verify_run`

1. reads run.json with the JSON guard of every door (no key twice, no NaN) and checks each key's type (a seed
   "abc" is a difference, not a traceback); privilege must follow the agent's entry point
   (`agent_entry_point`): `"privileged": true` exactly for `autovend.agents.oracle:OracleAgent`, and a shipped
   agent's entry point carries its own name (`outputs.check_identity`);
2. finds the world by the hash run.json records (`world.find_world`): the bundle given with --world, else the
   run's `world_path`, then the installed worlds; never a world inside the run folder;
3. reads trajectory.jsonl: every line one JSON object with the writer's keys in its order, `seq` 1, 2, 3, ...
   (a gap or a repetition names its line; `folder`);
4. replays the calls on a fresh episode of that world and seed, comparing each line the replay writes with the
   recorded one as text, all but the wall-clock fields (`wall_ms`, a query's `elapsed_ms`): seq, day, tool,
   arguments, ok, result and error (`replay`). For a run of a shipped agent that acts on the tools' answers
   alone (the baseline, the oracle, hold) the agent itself is run again from run.json's `agent_config`, and each
   call it makes must be the next recorded one;
5. writes the replayed run as the runner does and compares run.json's figures and call counters (seq, errors,
   by tool), the wall time against the tools' own, the token counts and cost against the model responses of the
   transcript (llm.jsonl), records.sqlite and hidden.sqlite table by table and row by row, daily.csv cell by
   cell (`tables`), and metrics.json, report.md and report.html regenerated from the replay (`outputs`).

A run saved without its report on purpose (`autovend run --no-report`, run.json `"evaluated": false`) has no
metrics.json, report.md or report.html to compare; any other run lacking one of them fails. The figures (PNG)
are not compared (they draw daily.csv, which is). Numbers are equal when they agree to 1e-9 relative; the first
difference stops the check and is reported with its file, line, day, call, table, row and field.
"""

from __future__ import annotations

from autovend.evaluation.verify.diff import Difference, Verification, first_difference, same
from autovend.evaluation.verify.record import VERIFY_FILE, digests, record_verification, recorded_verification
from autovend.evaluation.verify.run import verify_run
from autovend.evaluation.verify.world import WorldNotFoundError, find_world

__all__ = [
    "VERIFY_FILE",
    "Difference",
    "Verification",
    "WorldNotFoundError",
    "digests",
    "find_world",
    "first_difference",
    "record_verification",
    "recorded_verification",
    "same",
    "verify_run",
]

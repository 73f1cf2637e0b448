"""Where a run goes when no folder is given: `runs/<world>/<agent>-s<seed>` (`autovend run`, `run_episode`)."""

from __future__ import annotations

import re
from pathlib import Path

RUNS_DIR = "runs"


def default_run_dir(world_name: str, agent_name: str, seed: int) -> Path:
    """`runs/<world>/<agent>-s<seed>`: the run folder of `autovend run` without --out (names made file-safe).

    The world's name keeps the runs of one agent and seed on different worlds apart.
    """

    def safe(text: str) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip(".") or "x"

    return Path(RUNS_DIR) / safe(world_name) / f"{safe(agent_name)}-s{seed}"

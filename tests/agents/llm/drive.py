"""Run the harness on the toy world in a process of its own (for the kill-and-resume test).

python -m tests.agents.llm.drive BASE_URL OUT_DIR [--resume]
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.agents.llm.conftest import make_agent, make_world, play


def main(argv: list[str]) -> None:
    base_url, out = argv[0], Path(argv[1])
    session, agent = play(make_world(), lambda: make_agent(base_url), out, resume="--resume" in argv)
    agent.close()
    print(f"done {session.sim.net_assets}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

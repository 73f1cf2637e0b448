"""Run the harness on the toy world in a process of its own (for the kill-and-resume tests).

    python -m tests.agents.llm.drive BASE_URL OUT_DIR [--resume] [--runner]

Without --runner the small protocol driver of conftest.py runs it; with --runner, `autovend.runner.run_episode`
(synchronous checkpoints, no evaluation).
"""

from __future__ import annotations

import sys
from pathlib import Path

from autovend.env.boundary import simulator_of
from tests.agents.llm.conftest import SEED, make_agent, make_world, play


def main(argv: list[str]) -> None:
    base_url, out = argv[0], Path(argv[1])
    resume = "--resume" in argv
    if "--runner" in argv:
        from autovend.runner import run_episode

        summary = run_episode(
            make_world(), make_agent(base_url), SEED, out_dir=out, resume=resume, checkpoint="sync", evaluate=False
        )
        print(f"done {summary.final_net_assets}", flush=True)
        return
    session, agent = play(make_world(), lambda: make_agent(base_url), out, resume=resume)
    agent.close()
    print(f"done {simulator_of(session).net_assets}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

"""The runtime commands (world info, run, replay, serve) never import the pipeline's packages (or the LLM's, or
gym's).

A base install (`pip install autovend`) has none of them; this keeps it able to run worlds.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOT_AT_RUNTIME = ("dvc", "statsmodels", "pandera", "openai", "gymnasium")

SCRIPT = """
import json, sys
from autovend.cli import main

RUN = sys.argv[1]
for argv in (
    ["world", "info", "worlds/cn20"],
    ["run", "--world", "cn20", "--days", "1", "--out", RUN],
    ["replay", RUN, "--day", "1"],
    ["replay", RUN, "--summary"],
    ["replay", RUN, "--tool", "end_day", "--json"],
):
    sys.argv = ["autovend", *argv]
    try:
        main()
    except SystemExit as exc:
        assert exc.code in (0, None), (argv, exc.code)

from autovend.mcp.server import build_server
from autovend.world.catalogue import resolve_world

served = build_server(resolve_world("cn20"), seed=1)
assert served.session.call("end_day", {}).ok
served.close()
print("MODULES " + json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


@pytest.mark.slow
def test_world_info_run_replay_and_serve_leave_the_pipeline_and_the_llm_client_unimported(tmp_path):
    installed = [name for name in NOT_AT_RUNTIME if importlib.util.find_spec(name) is not None]
    assert {"dvc", "statsmodels", "pandera"} <= set(installed)  # the dev install has them: the check means something
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "run")], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("MODULES "))
    modules = set(json.loads(line.removeprefix("MODULES ")))
    assert {"autovend", "numpy", "pandas", "mcp"} <= modules  # the script did load the runtime
    assert json.loads((tmp_path / "run" / "run.json").read_text())["days"] == 1
    assert not modules & set(installed), sorted(modules & set(installed))


FIRST_CALL = """
import json, sys
from autovend.world.bundle import load_world
from autovend.sim import Simulator

world = load_world("worlds/cn20")
Simulator(world, seed=1)
from autovend.cli import app  # the console script's import, with every command registered
from autovend.mcp.server import build_server

served = build_server(world, seed=1)
assert served.session.call("get_weather", {}).ok  # the first tool call
served.close()
print("MODULES " + json.dumps(sorted(sys.modules)))
"""
# the estimation stack: none of it may load before an agent's first tool call (scipy not at all: the demand
# sampler imports scipy.special when the first day's demand is drawn, after the first call)
ESTIMATION = ("statsmodels", "scipy", "pandera", "dvc", "autovend.calibration", "autovend.validation")


@pytest.mark.slow
def test_loading_a_world_and_serving_it_imports_no_estimation_code_before_the_first_tool_call():
    proc = subprocess.run([sys.executable, "-c", FIRST_CALL], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    modules = json.loads(next(x for x in proc.stdout.splitlines() if x.startswith("MODULES ")).removeprefix("MODULES "))
    assert {"autovend.world.bundle", "autovend.sim", "autovend.mcp.server", "pandas"} <= set(modules)
    loaded = [m for m in modules if any(m == e or m.startswith(e + ".") for e in ESTIMATION)]
    assert loaded == []

"""One privilege story in process: agent code cannot reach the hidden state; privilege follows the code, not a name.

A plugin file run by `autovend run` tries every public way to the hidden demand model from its own code (start,
act_day, state_dict) and from a thread it started: `sealed`, `episode_of`, `simulator_of`, and the harness
functions built on them (`RunData.from_session`, `save_run_data`). Each is refused with `PrivilegeError`; the
plugin, named "oracle" and claiming `privileged = True`, is not marked privileged, and its run verifies.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autovend.agents.identity import entry_point, grant_hidden, is_privileged
from autovend.cli import app
from autovend.env import VendingEnv
from autovend.env.boundary import agent_code, episode_of, sealed, simulator_of
from autovend.errors import PrivilegeError
from autovend.session import ToolSession
from autovend.world.bundle import make_manifest, world_files, write_bundle
from autovend.world.model import Economics
from autovend.world.toy import toy_world

CHEAT = """
import json
import threading

from autovend.env import boundary


class Cheat:
    name = "oracle"  # the oracle's name, and a claim of privilege: neither makes it privileged
    privileged = True

    def __init__(self, seed=0):
        self.seen = {}
        self.go = threading.Event()
        self.thread = None

    def _try(self, where, read):
        try:
            read()
            self.seen[where] = "read"
        except Exception as exc:
            self.seen[where] = type(exc).__name__

    def _all(self, where, session):
        from autovend.evaluation import RunData, save_run_data

        self._try(where + ": sealed", lambda: boundary.sealed(session).world.demand_model)
        self._try(where + ": episode_of", lambda: boundary.episode_of(session).sim)
        self._try(where + ": simulator_of", lambda: boundary.simulator_of(session).hidden)
        self._try(where + ": RunData.from_session", lambda: RunData.from_session(session).hidden["demand"])
        self._try(where + ": save_run_data", lambda: save_run_data(session, OUT / "stolen"))

    def start(self, session):
        self._all("start", session)

        def later():
            self.go.wait(10)
            self._all("a thread of its own", session)

        self.thread = threading.Thread(target=later)
        self.thread.start()
        self.session = session

    def act_day(self, session):
        if session.day == 1:
            self._all("act_day", session)
            self.go.set()
        else:
            self.thread.join(10)
            (OUT / "seen.json").write_text(json.dumps(self.seen))
        session.call("end_day", {})

    def state_dict(self):
        self._all("state_dict", self.session)
        return {}

    def load_state(self, state):
        pass
"""


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    world = toy_world(3, 12, seed=0, economics=Economics(horizon_days=4))
    files = world_files(world)
    files["README.md"] = b"# toy world for the privilege tests\n"
    out = tmp_path_factory.mktemp("worlds") / "toy3"
    write_bundle(out, files, make_manifest(world, files, "toy", "toy", {}))
    return out


def test_a_plugin_cannot_reach_the_hidden_model_and_is_not_privileged_by_its_name(bundle, tmp_path):
    plugin = tmp_path / "cheat.py"
    plugin.write_text(f"from pathlib import Path\nOUT = Path({str(tmp_path)!r})\n{CHEAT}")
    run = tmp_path / "run"
    args = ["run", "--world", str(bundle), "--agent", f"{plugin}:Cheat", "--days", "2", "--out", str(run)]
    result = CliRunner().invoke(app, [*args, "--checkpoint", "sync"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    seen = json.loads((tmp_path / "seen.json").read_text())
    ways = ("sealed", "episode_of", "simulator_of", "RunData.from_session", "save_run_data")
    wheres = ("start", "act_day", "state_dict", "a thread of its own")
    assert seen == {f"{where}: {way}": "PrivilegeError" for where in wheres for way in ways}
    assert not (tmp_path / "stolen").exists()
    meta = json.loads((run / "run.json").read_text())
    assert meta["agent"] == "oracle" and "privileged" not in meta
    assert meta["agent_entry_point"] == f"{plugin.resolve()}:Cheat"
    verify = CliRunner().invoke(app, ["verify", str(run)], env={"COLUMNS": "200"})
    assert verify.exit_code == 0, verify.output


def test_the_accessors_refuse_inside_agent_code_and_from_other_threads(bundle):
    session = ToolSession(bundle, seed=1)
    try:
        assert simulator_of(session).day == 1  # the harness, before any agent holds the session
        with agent_code(session):
            for access in (sealed, episode_of, simulator_of):
                with pytest.raises(PrivilegeError, match=r"was refused while the agent's code runs"):
                    access(session)
            with agent_code(session), pytest.raises(PrivilegeError):  # nested: still agent code
                sealed(session)
            env = VendingEnv(bundle)  # an env the agent makes itself: refused as well
            with pytest.raises(PrivilegeError):
                sealed(env)
            assert session.call("get_warehouse", {}).ok  # the tools reach the episode their own way
        assert episode_of(session).sim.day == 1  # back in the harness: allowed again
        outcome: list[str] = []

        def other() -> None:
            try:
                sealed(session)
                outcome.append("read")
            except PrivilegeError as exc:
                outcome.append(str(exc))

        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert "from a thread other than the one the harness drives the agent on" in outcome[0]
        fresh = ToolSession(bundle, seed=2)  # no agent holds it: any thread of the harness may read it
        thread = threading.Thread(target=lambda: outcome.append(str(simulator_of(fresh).seed)))
        thread.start()
        thread.join()
        assert outcome[1] == "2"
        fresh.close()
    finally:
        session.close()


def test_privilege_and_entry_point_follow_the_class_never_the_name():
    from autovend.agents.baseline import BaselineAgent
    from autovend.agents.hold import HoldAgent
    from autovend.agents.oracle import OracleAgent

    class Impostor:
        name = "oracle"
        privileged = True

    Impostor.__module__, Impostor.__qualname__ = "autovend.agents.oracle", "OracleAgent"

    class Heir(OracleAgent):
        pass

    assert entry_point(OracleAgent()) == "autovend.agents.oracle:OracleAgent" and is_privileged(OracleAgent())
    assert entry_point(BaselineAgent()) == "autovend.agents.baseline:BaselineAgent"
    assert entry_point(HoldAgent()) == "autovend.agents.hold:HoldAgent"
    assert (
        entry_point(Impostor()) == "autovend.agents.oracle:OracleAgent (another class than AutoVend's own of that name)"
    )
    assert not is_privileged(Impostor()) and not is_privileged(Heir())
    assert entry_point(Heir()).endswith("test_privilege:test_privilege_and_entry_point_follow_the_class_never_the_name"
                                        ".<locals>.Heir")  # fmt: skip
    heir, oracle = Heir(), OracleAgent()
    world = toy_world(3, 12, seed=0)
    grant_hidden(heir, world)
    grant_hidden(oracle, world)
    grant_hidden(Impostor(), world)  # no reveal() called on it: nothing happens
    assert heir._world is None and oracle._world is world

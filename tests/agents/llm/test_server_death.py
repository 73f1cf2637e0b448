"""A model server that dies mid-run: the harness names the cause at once instead of retrying a connection.

The scripted fake server runs as a real subprocess (`ModelServer`), holds the agent's first request of day 2
and is killed there (SIGKILL, as the kernel ends a process; SIGILL, as a CPU ends one built for another CPU).
The run stops with "the model server died (exit N: killed by SIG...)" after one failed try, not after
`max_attempts` of them. A child `autovend run` learns of the death from the status file the serving process
writes (`STATUS_ENV`).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from autovend.agents.llm import local_server
from autovend.agents.llm.local_server import STATUS_ENV, ModelServer, describe_exit, free_port, server_exit
from autovend.errors import LLMError

from .conftest import make_agent, play

FAKE = Path(__file__).with_name("fake_openai.py")


def _accepts(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


def _fake_server(tmp_path: Path, hang_at: tuple[int, int]) -> ModelServer:
    port = free_port()
    cmd = [sys.executable, str(FAKE), "--port", str(port), "--hang-at", *map(str, hang_at)]
    return ModelServer(cmd, f"http://127.0.0.1:{port}/v1", ready=lambda: _accepts(port), log_path=tmp_path / "fake.log")


def _kill_when_hung(server: ModelServer, sig: int) -> threading.Thread:
    def watch() -> None:
        deadline = time.monotonic() + 60
        while "hung" not in server.log_tail(1) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.pid is not None
        os.kill(server.pid, sig)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(
    ("sig", "said"),
    [(signal.SIGKILL, "exit 137: killed by SIGKILL"), (signal.SIGILL, "exit 132: killed by SIGILL, an instruction")],
)
def test_a_server_killed_mid_run_stops_the_run_with_its_cause(world, tmp_path, sig, said):
    sleeps: list[float] = []
    with _fake_server(tmp_path, hang_at=(2, 1)) as server:
        watcher = _kill_when_hung(server, sig)
        with pytest.raises(LLMError) as caught:
            play(world, lambda: make_agent(server.base_url, sleeps=sleeps, max_attempts=6), tmp_path / "run")
        watcher.join(10)
    message = str(caught.value)
    assert f"the model server died ({said}" in message and "--resume" in message
    assert "gave up after" not in message and len(sleeps) <= 1  # one failed try at most, not six
    status = json.loads(server.status_path.read_text(encoding="utf-8"))
    assert status["exit"] == -sig and status["stopped"] is False
    assert server_exit(server.base_url) is None  # stopped and forgotten once the context ends


def test_a_child_run_reads_the_serving_process_status_file(tmp_path, monkeypatch):
    url = "http://127.0.0.1:9/v1"
    status = tmp_path / "server.status.json"
    monkeypatch.setenv(STATUS_ENV, str(status))
    assert server_exit(url) is None  # no file yet: the server runs
    status.write_text(json.dumps({"base_url": url, "exit": -4, "stopped": False}))
    assert server_exit(url) == -4 and server_exit(url + "/") == -4
    assert server_exit("http://127.0.0.1:10/v1") is None  # another server
    status.write_text(json.dumps({"base_url": url, "exit": -15, "stopped": True}))
    assert server_exit(url) is None  # stopped on purpose: not a death


def test_exits_in_words():
    assert describe_exit(1) == "exit 1"
    assert describe_exit(-9) == "exit 137: killed by SIGKILL"
    assert describe_exit(-4).startswith("exit 132: killed by SIGILL, an instruction this CPU does not allow")
    assert "make local" in describe_exit(-4)


def test_a_server_stopped_on_purpose_is_not_reported_dead(tmp_path):
    with _fake_server(tmp_path, hang_at=(99, 1)) as server:
        assert server_exit(server.base_url) is None
        assert local_server._RUNNING[server.base_url] is server
    assert server_exit(server.base_url) is None and server.base_url not in local_server._RUNNING
    # read at once after the stop, the status file is whole and says the server was stopped, not killed
    status = json.loads(server.status_path.read_text(encoding="utf-8"))
    assert status == {"base_url": server.base_url, "pid": server.pid, "exit": -signal.SIGTERM, "stopped": True}

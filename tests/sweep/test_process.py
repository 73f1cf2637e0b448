"""A sweep's run in a process of its own (`autovend.sweep.process`): a time limit, a stop, a death that takes only
that run, and a run process that ends itself when its worker is gone. The child here is `tests.sweep.fake_child`,
which speaks the protocol of `autovend.sweep.child`; the real one runs in tests/sweep/test_tasks.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from autovend.sweep import process
from autovend.sweep.process import describe_exit, run_child

FAKE = "tests.sweep.fake_child"


def _run(do: str, **kwargs):
    events: list[dict] = []
    t0 = time.monotonic()
    result = run_child({"do": do}, events.append, module=FAKE, **kwargs)
    return result, events, time.monotonic() - t0


def test_an_outcome_and_the_events_come_back():
    result, events, _ = _run("ok")
    assert result.ending == "outcome" and result.message["status"] == "ran" and result.exit_code == 0
    assert events == [{"kind": "day", "day": 1, "days": 3}]


def test_a_run_over_its_time_limit_is_stopped_within_the_poll():
    """A plugin sleeping in act_day stalled the sweep: there was no time limit at all."""
    result, events, seconds = _run("sleep", timeout_s=1.0)
    assert result.ending == "timed_out" and result.exit_code == -signal.SIGTERM
    assert 1.0 <= seconds < 1.0 + 2 * process.POLL_S + 1.0
    assert events == [{"kind": "day", "day": 1, "days": 3}]  # what it said before is kept


def test_a_run_that_ignores_sigterm_is_killed_after_the_grace(monkeypatch):
    monkeypatch.setattr(process, "GRACE_S", 0.5)
    result, _, seconds = _run("deaf", timeout_s=0.5)
    assert result.ending == "timed_out" and result.exit_code == -signal.SIGKILL
    assert seconds < 0.5 + 0.5 + 2.0


def test_a_process_that_dies_is_reported_with_its_exit_code_and_nothing_else_dies():
    """os._exit in a plugin killed the shared worker, and Dask blamed another run; now only its own process ends."""
    result, events, _ = _run("exit")
    assert result.ending == "died" and result.exit_code == 3 and not result.message
    assert describe_exit(result.exit_code) == "exit code 3"
    assert describe_exit(-9) == "killed by SIGKILL"
    assert events == [{"kind": "day", "day": 1, "days": 3}]
    assert os.getpid() and _run("ok")[0].ending == "outcome"  # this process (the worker) goes on


def test_a_run_that_closes_its_events_pipe_still_has_a_time_limit():
    """The watch ended at the pipe's end and then waited for the process without a limit."""
    result, _, seconds = _run("mute", timeout_s=1.0)
    assert result.ending == "timed_out" and seconds < 1.0 + 2 * process.POLL_S + 1.0


def test_a_run_that_floods_its_events_pipe_is_read_in_bounded_memory():
    result, events, _ = _run("flood")
    assert result.ending == "outcome" and events == [{"kind": "day", "day": 1, "days": 3}]


def test_a_stop_ends_the_run_at_the_next_check(monkeypatch):
    monkeypatch.setattr(process, "STOP_CHECK_S", 0.2)
    asked = time.monotonic() + 0.5
    result, _, seconds = _run("sleep", stop_asked=lambda: time.monotonic() > asked)
    assert result.ending == "stopped" and seconds < 0.5 + 0.2 + 1.5


def test_what_the_run_prints_does_not_mix_with_its_events(capfd):
    result, events, _ = _run("chatty")
    assert result.ending == "outcome" and events == [{"kind": "day", "day": 1, "days": 3}]
    assert len(capfd.readouterr().out) == 1 << 20


def test_a_run_process_whose_worker_is_gone_stops_itself():
    """Started with the id of a process that is not its parent, the real child sees it orphaned and ends (143)."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    r, w = os.pipe()
    try:
        child = subprocess.Popen(
            [sys.executable, "-m", "autovend.sweep.child", str(w), gone.stdout.strip()],
            stdin=subprocess.PIPE,
            pass_fds=(w,),
        )
        t0 = time.monotonic()
        code = child.wait(timeout=30)  # it never reads its task: stdin stays open
        assert code == 143 and time.monotonic() - t0 < 15
    finally:
        os.close(r)
        os.close(w)
        if child.poll() is None:
            child.kill()


@pytest.mark.parametrize("code", [None, 0, 2, -15])
def test_exits_in_words(code):
    assert (
        describe_exit(code)
        == {None: "an unknown exit", 0: "exit code 0", 2: "exit code 2", -15: "killed by SIGTERM"}[code]
    )

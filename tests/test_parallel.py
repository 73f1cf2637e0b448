"""autovend.parallel's progress bar: drawn from the client's own futures, to 100% whether tasks succeed or fail."""

from __future__ import annotations

import io
import threading

import pytest

from autovend.parallel import follow

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=":0") as made:
        yield made


GATES = [threading.Event() for _ in range(4)]  # tasks run in this process (threads), so they see these


def _wait_for(gate: int, value: int) -> int:
    assert GATES[gate].wait(30)
    if value < 0:
        raise ValueError("a failing task")
    return value


def test_the_bar_follows_the_tasks_to_the_end(client):
    futures = [client.submit(_wait_for, g, v, pure=False) for g, v in enumerate([1, 2, -3, 4])]
    out = io.StringIO()
    done = threading.Event()
    runner = threading.Thread(target=lambda: (follow(futures, out, poll_s=0.01), done.set()))
    runner.start()
    GATES[0].set()
    distributed.wait(futures[:1])
    GATES[2].set()  # a failed task counts as finished: its error comes with the results
    distributed.wait(futures[2:3])
    assert not done.wait(0.2)  # two of four still running
    for gate in GATES:
        gate.set()
    runner.join(30)
    assert done.is_set()
    frames = out.getvalue().split("\r")[1:]
    shares = [int(f.split("|")[1].split("%")[0]) for f in frames]
    assert shares == sorted(shares) and shares[0] == 0 and shares[-1] == 100
    assert 50 in shares  # drawn while half the tasks were done
    assert len(frames) == len(set(shares))  # not a terminal: a frame only when the share changes
    assert frames[-1].startswith("[" + "#" * 40 + "] | 100% Completed |") and frames[-1].endswith("\n")
    assert frames[shares.index(50)].startswith("[" + "#" * 20 + " " * 20 + "]")
    assert [f.status for f in futures] == ["finished", "finished", "error", "finished"]


def test_no_tasks_draws_nothing_and_returns(client):
    out = io.StringIO()
    follow([], out)
    assert out.getvalue() == ""

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


def _state(i: int) -> list[int]:
    return [i]


def _times(state: list[int], k: int) -> int:
    return state[0] * k


def test_groups_on_dask_answer_in_group_order_with_one_call_a_worker_a_round(monkeypatch):
    from autovend import parallel

    lane_calls: list[int] = []
    real = parallel.Holder.apply_lane

    def counted(self, tokens, fn, *args):
        lane_calls.append(len(tokens))
        return real(self, tokens, fn, *args)

    monkeypatch.setattr(parallel.Holder, "apply_lane", counted)
    with distributed.Client(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=":0") as client:
        executor = parallel.DaskExecutor(client, "two workers")
        groups = executor.groups(_state, [(i,) for i in range(5)])
        assert groups.lanes == [0, 1, 0, 1, 0]  # group i on worker i % 2
        assert groups.run(_times, 10) == [0, 10, 20, 30, 40]
        assert sorted(lane_calls) == [2, 3]  # a call a worker, not a call a group
        assert [groups.start_on(g, _times, 3)() for g in (4, 1)] == [12, 3]
        groups.close()

"""The outside-player driver (`autovend.outside`): the runner on a thread, fed jobs from other threads.

Runs of a toy world for a day or two without the evaluation, so every test is quick; the doors that use the
driver (tests/console/test_episode.py, tests/mcp/test_play.py) play whole scored runs.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import pytest

from autovend.errors import CheckpointError
from autovend.outside import OutsideAgent, OutsidePlay, RunEnded
from autovend.runner import CHECKPOINT_DIR, CHECKPOINT_FILE, read_checkpoint
from autovend.world.model import Economics, World
from autovend.world.toy import toy_world


@pytest.fixture(scope="module")
def world() -> World:
    return toy_world(3, 12, seed=0, economics=Economics(horizon_days=5))


class Keeper(OutsideAgent):
    """An outside agent that notes the days it saw settled."""

    def __init__(self) -> None:
        super().__init__("outside-test")
        self.settled: list[int] = []

    def day_settled(self, session: Any) -> None:
        self.settled.append(session.day)


def _play(world: World, out, agent: OutsideAgent | None = None, **kw: Any) -> OutsidePlay:
    kw.setdefault("days", 2)
    return OutsidePlay(world, agent or Keeper(), 1, out, evaluate=False, **kw).start()


def _thread_ended(play: OutsidePlay) -> bool:
    return play._thread is not None and not play._thread.is_alive()


def test_start_opens_day_one_and_a_call_is_answered_on_the_runners_thread(world, tmp_path):
    play = _play(world, tmp_path / "run")
    try:
        assert play.agent.ready.is_set() and not play.returned
        result = play.submit(lambda s: s.call("get_warehouse", {}))
        assert result.ok and result.content["day"] == 1
        assert play.submit(lambda s: (s.day, threading.current_thread().name)) == (1, "autovend-play-run")
    finally:
        play.close()
    assert _thread_ended(play)


def test_end_day_is_answered_once_the_day_is_checkpointed(world, tmp_path):
    agent = Keeper()
    play = _play(world, tmp_path / "run", agent, days=3)
    try:
        assert play.submit(lambda s: s.call("end_day", {})).ok
        assert read_checkpoint(tmp_path / "run" / CHECKPOINT_DIR / CHECKPOINT_FILE)["day"] == 1
        assert agent.settled == [2]  # the session is on the next day once the day is settled
        assert play.submit(lambda s: s.day) == 2
        assert play.submit(lambda s: s.call("end_day", {})).ok
        assert read_checkpoint(tmp_path / "run" / CHECKPOINT_DIR / CHECKPOINT_FILE)["day"] == 2
        assert play.submit(lambda s: s.day) == 3
    finally:
        play.close()


def test_the_last_day_is_answered_after_the_runner_returned_and_then_no_job_is_taken(world, tmp_path):
    seen: list[Any] = []

    def last_answer(value: Any, summary: Any) -> Any:
        seen.append((value.ok, summary.days))
        return "changed"

    scoring = threading.Lock()
    play = _play(world, tmp_path / "run", scoring=scoring, last_answer=last_answer)
    try:
        assert play.submit(lambda s: s.call("end_day", {})).ok
        assert play.submit(lambda s: s.call("end_day", {})) == "changed"
        assert play.returned and play.summary is not None and play.summary.days == 2
        assert seen == [(True, 2)]
        assert not scoring.locked()  # taken for the scoring of the last day, given back when the runner returned
        with pytest.raises(RunEnded, match=r"the episode is over \(2 days settled\)"):
            play.submit(lambda s: s.day)
    finally:
        play.close()
    assert _thread_ended(play)
    assert not (tmp_path / "run" / CHECKPOINT_DIR).exists()  # a finished run keeps no checkpoint
    assert json.loads((tmp_path / "run" / "run.json").read_text())["agent"] == "outside-test"


def test_settling_the_last_day_holds_the_scoring_lock_until_the_runner_returns(world, tmp_path):
    class Lock:
        def __init__(self) -> None:
            self.events: list[str] = []

        def acquire(self) -> None:
            self.events.append("acquire")

        def release(self) -> None:
            self.events.append("release")

    lock = Lock()
    play = _play(world, tmp_path / "run", scoring=lock, last_answer=lambda v, s: lock.events.append("answer") or v)
    try:
        play.submit(lambda s: s.call("end_day", {}))
        assert lock.events == []  # not the last day
        play.submit(lambda s: s.call("end_day", {}))
        assert lock.events == ["acquire", "release", "answer"]
    finally:
        play.close()


def test_a_job_that_raises_hands_its_error_to_the_caller_and_the_day_goes_on(world, tmp_path):
    play = _play(world, tmp_path / "run")
    try:
        with pytest.raises(ZeroDivisionError):
            play.submit(lambda s: 1 / 0)
        assert play.submit(lambda s: s.call("end_day", {})).ok
        assert play.submit(lambda s: s.day) == 2 and play.failure is None
    finally:
        play.close()


def test_an_agent_that_stops_on_error_ends_the_run_and_names_the_error(world, tmp_path):
    class Strict(Keeper):
        stop_on_error = True

    play = _play(world, tmp_path / "run", Strict())
    try:
        with pytest.raises(ZeroDivisionError):
            play.submit(lambda s: 1 / 0)
        play._thread.join(10)
        assert play.returned and isinstance(play.failure, ZeroDivisionError) and play.summary is None
        with pytest.raises(RunEnded, match="stopped on an error: ZeroDivisionError: division by zero"):
            play.submit(lambda s: s.day)
    finally:
        play.close()
    assert _thread_ended(play)


def test_an_error_of_the_runner_after_the_day_surfaces_to_the_next_caller(world, tmp_path, caplog):
    class Unsaveable(Keeper):
        def state_dict(self) -> dict[str, Any]:  # the runner asks for it when it checkpoints the day
            raise RuntimeError("no state today")

    play = _play(world, tmp_path / "run", Unsaveable())
    try:
        with caplog.at_level(logging.ERROR, logger="autovend.outside"):
            assert play.submit(lambda s: s.call("end_day", {})).ok  # the day was settled; its answer still comes
            play._thread.join(10)
        assert isinstance(play.failure, RuntimeError) and play.returned
        assert "the run in" in caplog.text and "no state today" in caplog.text
        with pytest.raises(RunEnded, match="stopped on an error: RuntimeError: no state today"):
            play.submit(lambda s: s.day)
    finally:
        play.close()
    assert _thread_ended(play)


def test_close_stops_the_runner_and_the_next_play_resumes_from_the_checkpoint(world, tmp_path):
    out = tmp_path / "run"
    play = _play(world, out)
    play.submit(lambda s: s.call("end_day", {}))
    play.submit(lambda s: s.call("write_memory", {"text": "lost: the day is not settled"}))
    play.close()
    assert _thread_ended(play) and play.returned and play.failure is None and play.summary is None
    with pytest.raises(RunEnded, match="stopped"):
        play.submit(lambda s: s.day)
    play.close()  # twice is fine
    again = _play(world, out)
    try:
        assert again.submit(lambda s: (s.day, s.notebook)) == (2, "")
    finally:
        again.close()


def test_jobs_from_several_threads_run_one_at_a_time_in_their_order(world, tmp_path):
    play = _play(world, tmp_path / "run")
    inside: list[int] = []
    overlap: list[bool] = []

    def job(i: int) -> Any:
        def run(session: Any) -> int:
            overlap.append(bool(inside))
            inside.append(i)
            session.call("get_warehouse", {})
            inside.remove(i)
            return i

        return run

    answers: dict[int, int] = {}
    threads = [threading.Thread(target=lambda i=i: answers.update({i: play.submit(job(i))})) for i in range(8)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert answers == {i: i for i in range(8)} and not any(overlap)
    finally:
        play.close()


def test_a_runner_that_cannot_start_raises_from_start(world, tmp_path):
    out = tmp_path / "run"
    play = _play(world, out)
    play.submit(lambda s: s.call("end_day", {}))
    play.close()
    other = OutsidePlay(world, Keeper(), 2, out, days=2, evaluate=False)
    with pytest.raises(CheckpointError, match="seed 1 \\(now 2\\)"):
        other.start()
    assert _thread_ended(other) and other.returned
    with pytest.raises(RunEnded):
        other.submit(lambda s: s.day)


def test_close_before_start_and_a_closed_play_takes_no_job(world, tmp_path):
    play = OutsidePlay(world, Keeper(), 1, tmp_path / "run", days=2, evaluate=False)
    play.close()
    with pytest.raises(RunEnded):
        play.submit(lambda s: s.day)

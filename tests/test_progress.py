"""autovend.progress: steps declared with their shares, nested steps splitting their parent's share, no listener no
work; the listener sees only names and fractions."""

from __future__ import annotations

import pytest

from autovend.progress import listening, step, stepped, steps


@stepped("inner", {"a": 1.0, "b": 3.0})
def inner() -> str:
    step("a")
    step("b")
    return "inner done"


@stepped("outer", {"load": 1.0, "fit": 2.0, "write": 1.0})
def outer() -> None:
    step("load")
    step("fit")
    inner()
    step("write")


def _record(fn) -> list[tuple[str, float]]:
    seen: list[tuple[str, float]] = []
    with listening(lambda what, done: seen.append((what, done))):
        fn()
    return seen


def test_nested_steps_split_the_share_of_the_step_they_run_in():
    assert _record(outer) == [
        ("outer: load", 0.0),
        ("outer: fit", 0.25),
        ("outer: fit, a", 0.25),
        ("outer: fit, b", 0.375),
        ("outer: fit", 0.75),
        ("outer: write", 0.75),
        ("outer", 1.0),
    ]


def test_without_a_listener_nothing_is_reported_and_the_result_is_returned():
    assert inner() == "inner done"
    step("anything")  # outside a stepped function and without a listener: nothing
    with steps("x", {"y": 1.0}):
        step("not a step of x")  # no listener: not even checked


def test_a_step_that_is_not_declared_is_a_bug_found_with_a_listener():
    @stepped("w", {"a": 1.0})
    def wrong() -> None:
        step("b")

    with pytest.raises(ValueError, match="w has no step 'b'; its steps are: a"), listening(lambda *_: None):
        wrong()


def test_a_failed_stepped_call_leaves_the_outer_steps_as_they_were():
    @stepped("failing", {"a": 1.0})
    def failing() -> None:
        step("a")
        raise RuntimeError("boom")

    @stepped("caller", {"try": 1.0, "after": 1.0})
    def caller() -> None:
        step("try")
        with pytest.raises(RuntimeError):
            failing()
        step("after")  # still the caller's step, not the failed call's

    assert _record(caller)[-2:] == [("caller: after", 0.5), ("caller", 1.0)]


@pytest.mark.parametrize("weights", [{}, {"a": 0.0}, {"a": -1.0, "b": 2.0}])
def test_weights_must_be_usable(weights):
    with pytest.raises(ValueError, match="non-negative weights with a positive sum"):
        stepped("x", weights)

"""Progress of the long commands (`synth`, `calibrate`, `validate`, `export-world`) through their real steps.

A function that does long work declares its steps, in order, with their usual share of its time
(`stepped`, or a `steps` block), and marks each as it starts (`step`):

    @stepped("calibration", {"panel": 1.0, "first pass": 3.0, "second pass": 3.0})
    def calibrate(...):
        step("panel")
        ...

A stepped function called inside a step of another (validation's training calibration) splits that
step's share among its own steps, so the fraction done only grows. Whoever wants to follow the work
(the command line's progress bar) installs a listener with `listening`; it gets, at each step, what is
under way ("validation: training calibration, second pass") and the fraction done (0 to 1). Without
a listener nothing happens. The listener only ever sees step names and fractions: nothing of it is
written to an output file. The shares are the steps' wall times measured on the embedded synthetic
operator (they set the bar's pace, so its estimate of the time left; not its results).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import ParamSpec, TypeVar

Listener = Callable[[str, float], None]  # (what is under way, fraction of the whole done)

P = ParamSpec("P")
R = TypeVar("R")


@dataclass
class _Frame:
    """One stepped call under way: its span of the whole, its steps' shares and the current step."""

    what: str
    lo: float
    hi: float
    label: str  # what precedes a step's name in what the listener is told
    shares: dict[str, tuple[float, float]]  # step -> (start, end) as fractions of this frame's span
    current: str | None = None
    seen: set[str] = field(default_factory=set)

    def span_of(self, name: str) -> tuple[float, float]:
        a, b = self.shares[name]
        width = self.hi - self.lo
        return self.lo + a * width, self.lo + b * width


_LISTENER: ContextVar[Listener | None] = ContextVar("autovend_progress_listener", default=None)
_FRAMES: ContextVar[tuple[_Frame, ...]] = ContextVar("autovend_progress_frames", default=())


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Send the steps of the work done inside this block to `listener`."""
    token = _LISTENER.set(listener)
    frames = _FRAMES.set(())
    try:
        yield
    finally:
        _FRAMES.reset(frames)
        _LISTENER.reset(token)


def _shares(weights: Mapping[str, float]) -> dict[str, tuple[float, float]]:
    total = sum(weights.values())
    if not weights or total <= 0 or any(w < 0 for w in weights.values()):
        raise ValueError(f"steps need non-negative weights with a positive sum, got {dict(weights)}")
    out, at = {}, 0.0
    for name, w in weights.items():
        out[name] = (at / total, (at + w) / total)
        at += w
    return out


@contextmanager
def steps(what: str, weights: Mapping[str, float]) -> Iterator[None]:
    """The block does the work `what`, in the steps `weights` names (in order, with their shares of its time)."""
    shares = _shares(weights)
    listener = _LISTENER.get()
    if listener is None:
        yield
        return
    frames = _FRAMES.get()
    outer = frames[-1] if frames else None
    if outer is not None and outer.current is not None:  # inside a step: split its share
        lo, hi = outer.span_of(outer.current)
        label = f"{outer.label} {outer.current},"
    elif outer is not None:
        lo, hi, label = outer.lo, outer.hi, outer.label
    else:
        lo, hi, label = 0.0, 1.0, f"{what}:"
    token = _FRAMES.set((*frames, _Frame(what, lo, hi, label, shares)))
    try:
        yield
    finally:
        _FRAMES.reset(token)
    listener(label.rstrip(":,"), hi)


def stepped(what: str, weights: Mapping[str, float]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """`steps` around every call of a function.

    The wrapper holds the function's arguments for the call: a function that frees one of them early (as
    `calibrate` its source) uses a `steps` block inside instead.
    """
    _shares(weights)  # refused at import, not at the first call

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with steps(what, weights):
                return fn(*args, **kwargs)

        return wrapper

    return decorate


def step(name: str) -> None:
    """Mark the step `name` of the innermost stepped function as started (nothing without a listener)."""
    listener = _LISTENER.get()
    frames = _FRAMES.get()
    if listener is None or not frames:
        return
    frame = frames[-1]
    if name not in frame.shares:
        raise ValueError(f"{frame.what} has no step {name!r}; its steps are: {', '.join(frame.shares)}")
    frame.current = name
    lo, _ = frame.span_of(name)
    listener(f"{frame.label} {name}", lo)

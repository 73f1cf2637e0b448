"""The rule-based baseline as an array policy (`ArrayBaseline`, `policy`), for `AutoVend-Array-v0`."""

from autovend.agents.array_baseline.policy import ArrayBaseline

__all__ = ["ArrayBaseline"]

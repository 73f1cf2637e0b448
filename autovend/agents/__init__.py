"""Agents: the rule-based baseline and the LLM harness."""

"""Evaluation metrics and reports of runs."""

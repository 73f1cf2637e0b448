"""Held-out validation of the calibrated demand model."""

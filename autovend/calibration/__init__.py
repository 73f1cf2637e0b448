"""Calibration: from checked records to the demand parameters of eq. (2)-(4)."""

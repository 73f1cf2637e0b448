"""The demand model of eq. (2)-(4): settings, environment multiplier, shock and the shared kernel."""

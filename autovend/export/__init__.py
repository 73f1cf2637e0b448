"""Building a world from a calibration: network, catalog, weather, economics, and the bundle they are frozen in.

This is the pipeline's side of the bundle format (`autovend.world.bundle`): loading a world needs
nothing from here.
"""

"""The array interface: N runs of a world stepped together in numpy, actions and observations as arrays.

`ArraySim` (`autovend.arrays.core`) is the engine; `autovend.arrays.env` puts it behind gymnasium as
`AutoVend-Array-v0` (import it to register the env). See docs/agents.md ("The array interface").
"""

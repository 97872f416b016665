"""Random numbers of OpenCL devices: accel.opencl.manual_seed and friends.

Each function is a method of ``RANDOM``; accel/_random.py says how a seed
reaches the device's generator (docs/python-internals.md, "The seeds' flow, layer by layer").
"""

from __future__ import annotations

from .._random import BackendRandom

RANDOM = BackendRandom("opencl")

# The functions, by the names BackendRandom.exports() gives them (written once there).
globals().update(RANDOM.exports())
__all__ = list(RANDOM.exports())

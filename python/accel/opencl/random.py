"""Random numbers of OpenCL devices: accel.opencl.manual_seed and friends.

Each function is a method of the OpenCL backend's surface; accel/_random.py says how a
seed reaches the device's generator (docs/python-internals.md, "The seeds'
flow, layer by layer").
"""

from ._surface import surface as _api

globals().update(_api.random_exports())
__all__ = list(_api.random_exports())

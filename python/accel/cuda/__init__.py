"""accel.cuda: the CUDA backend in the shape of torch.cuda.

Works whether or not a CUDA backend is loaded: without one, is_available()
is False, device_count() is 0 and every other call raises NotAvailableError
saying how to load a backend. Importing it touches no device.
"""

from __future__ import annotations as _annotations

from .._backend import _modules, populate as _populate
from . import random
from .random import *  # noqa: F401,F403  (manual_seed, get_rng_state, ...)

_populate(globals(), "cuda", random.RANDOM)
_modules["cuda"] = __import__("sys").modules[__name__]

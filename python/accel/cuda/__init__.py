"""accel.cuda: the CUDA backend in the shape of torch.cuda.

Works whether or not a CUDA backend is loaded: without one, is_available()
is False, device_count() is 0 and every other call raises NotAvailableError
saying how to load a backend. Importing it touches no device.
"""

from .._backend import publish as _publish
from ._surface import surface as _api
from . import random as random  # noqa: F401  (accel.cuda.random, as torch.cuda.random)

_publish(_api, globals())

"""accel.openreg: the simulated openreg accelerator in the shape of torch.cuda.

Everything a backend module has (accel._backend.Backend: devices, streams,
events, memory, graphs, random numbers), plus openreg's extras: device fills
from a generator, fault injection and execution units
(accel/openreg/_surface.py). Importing it registers the openreg hooks
(bundled with the package) but touches no device.
"""

from .._backend import publish as _publish
from ._surface import surface as _api
from . import random as random  # noqa: F401  (accel.openreg.random, as torch.cuda.random)

_publish(_api, globals())

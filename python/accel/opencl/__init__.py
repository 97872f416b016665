"""accel.opencl: the OpenCL backend in the shape of torch.cuda.

Everything a backend module has (accel._backend.Backend: devices, streams,
events, memory, random numbers), plus the OpenCL backend's extras: why there
are (no) devices, each device's OpenCL properties, the native handles a
framework needs to enqueue its own kernels on accelhooks streams, and device
fills from a generator (accel/opencl/_surface.py). Importing it registers the
opencl hooks (the plugin is part of the package's native module) but opens no
OpenCL library and touches no device: that happens on first use. Without the
OpenCL backend in the build, importing it raises ImportError.
"""

from .._backend import publish as _publish
from ._surface import surface as _api
from . import random as random  # noqa: F401  (accel.opencl.random, as torch.cuda.random)

_publish(_api, globals())

"""accel.opencl: the OpenCL backend in the shape of torch.cuda.

Everything a backend module has (accel._backend.populate: devices, streams,
events, memory, random numbers), plus the OpenCL backend's extras: why there
are (no) devices, each device's OpenCL properties, the native handles a
framework needs to enqueue its own kernels on accelhooks streams, and device
fills from a generator. Importing it registers the opencl hooks (the plugin is
part of the package's native module) but opens no OpenCL library and touches
no device: that happens on first use.
"""

from __future__ import annotations as _annotations

import sys
from typing import Any as _Any, Dict as _Dict, Optional as _Optional

from .. import _C
from .._backend import _modules, populate as _populate
from .._lazy import state as _state

try:
    from . import _native
except ModuleNotFoundError as _missing:  # pragma: no cover - built without OpenCL headers
    raise ImportError("accel was built without the OpenCL backend (CL/cl.h not found)",
                      name=_missing.name) from None

# Registered before the random module, which looks the hooks up.
_native.register_backend()

from . import random  # noqa: E402
from .random import *  # noqa: E402,F401,F403  (manual_seed, get_rng_state, ...)
_populate(globals(), "opencl", random.RANDOM)
_modules["opencl"] = sys.modules[__name__]
_lazy_state = _state("opencl")


def availability() -> _Dict[str, _Any]:
    """{'device_count', 'reason', 'skipped'}: why the backend has the devices it
    has ('reason' is empty with devices; 'skipped' lists devices seen but not
    used, a line each)."""
    return _native.availability()


def device_info(device: int = 0) -> _Dict[str, _Any]:
    """What clGetDeviceInfo says about opencl:`device`, as a dict (name, type,
    version, memory sizes, SVM, fp64, extensions, ...)."""
    return _native.device_info(device)


def native_handles(device: int = 0) -> _Dict[str, int]:
    """{'platform', 'device', 'context'}: the cl_platform_id, cl_device_id and
    cl_context of opencl:`device` as integers (for pyopencl and friends)."""
    _lazy_state.lazy_init()
    return _native.native_handles(device)


def native_queue(stream: _C.Stream) -> int:
    """The cl_command_queue behind `stream` (in order, profiling enabled), as an
    integer: enqueue your own kernels on it to run in stream order."""
    _lazy_state.lazy_init()
    return _native.native_queue(stream)


def fill_uniform(buffer: _C.Buffer, low: float = 0.0, high: float = 1.0, *,
                 dtype: str = "float32", generator: _Optional[_C.Generator] = None,
                 stream: _Optional[_C.Stream] = None) -> None:
    """Enqueues a uniform fill of an opencl device buffer (float32 or float64
    elements) on `stream` (default: the buffer device's current stream), from
    `generator` (default: that device's default generator). The numbers equal
    the host fill's for the same (seed, offset)."""
    _lazy_state.lazy_init()
    _native.fill_uniform(buffer, low, high, dtype, generator, stream)


def fill_normal(buffer: _C.Buffer, mean: float = 0.0, std: float = 1.0, *,
                dtype: str = "float32", generator: _Optional[_C.Generator] = None,
                stream: _Optional[_C.Stream] = None) -> None:
    """Like fill_uniform, normal(mean, std)."""
    _lazy_state.lazy_init()
    _native.fill_normal(buffer, mean, std, dtype, generator, stream)

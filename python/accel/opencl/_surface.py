"""The surface of accel.opencl: the backend API (accel._backend.Backend)
plus the OpenCL backend's extras: why there are (no) devices, each device's
OpenCL properties, the native handles a framework needs to enqueue its own
kernels on accelhooks streams, and device fills from a generator, over its
native module (accel.opencl._native).

Importing it registers the opencl hooks (the plugin is part of the
package's native module) but opens no OpenCL library and touches no device:
that happens on first use. Thread-safety: every method is thread-safe.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from .. import _C
from .._backend import Backend

try:
    from . import _native
except ModuleNotFoundError as _missing:  # pragma: no cover - built without OpenCL headers
    raise ImportError("accel was built without the OpenCL backend (CL/cl.h not found)",
                      name=_missing.name) from None


class OpenCl(Backend):
    """accel.opencl's API: every backend's, and the OpenCL backend's extras."""

    def availability(self) -> Dict[str, Any]:
        """{'device_count', 'reason', 'skipped'}: why the backend has the devices it
        has ('reason' is empty with devices; 'skipped' lists devices seen but not
        used, a line each)."""
        return _native.availability()

    def device_info(self, device: int = 0) -> Dict[str, Any]:
        """What clGetDeviceInfo says about opencl:`device`, as a dict (name, type,
        version, memory sizes, SVM, fp64, extensions, ...)."""
        return _native.device_info(device)

    def native_handles(self, device: int = 0) -> Dict[str, int]:
        """{'platform', 'device', 'context'}: the cl_platform_id, cl_device_id and
        cl_context of opencl:`device` as integers (for pyopencl and friends)."""
        self._lazy.lazy_init()
        return _native.native_handles(device)

    def native_queue(self, stream: _C.Stream) -> int:
        """The cl_command_queue behind `stream` (in order, profiling enabled), as an
        integer: enqueue your own kernels on it to run in stream order."""
        self._lazy.lazy_init()
        return _native.native_queue(stream)


# Registered before the surface is made, which looks the hooks up.
_native.register_backend()
surface = OpenCl("opencl", "accel.opencl")

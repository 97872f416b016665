"""The surface of accel.openreg: the backend API (accel._backend.Backend)
plus openreg's extras: fault injection and execution units, over its native module (accel.openreg._native).

Importing it registers the openreg hooks (bundled with the package) but
touches no device. Thread-safety: every method is thread-safe.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from .. import _C
from .._backend import Backend
from .._devices import DeviceLike, check_type, index_for
from . import _native


class OpenReg(Backend):
    """accel.openreg's API: every backend's, and openreg's extras."""

    def fail_nth_allocation(self, nth: int) -> None:
        """The nth openreg allocation from now raises OutOfMemoryError (0 cancels)."""
        _native.fail_nth_allocation(nth)

    def lose_device_after(self, device: DeviceLike, operations: int) -> None:
        """The device is lost after `operations` more operations (DeviceError after)."""
        _native.lose_device_after(index_for("openreg", device), operations)

    def is_device_lost(self, device: DeviceLike) -> bool:
        """True once the device is lost."""
        return bool(_native.is_device_lost(index_for("openreg", device)))

    def set_stream_latency(self, stream: _C.Stream, microseconds: float) -> None:
        """Every operation on `stream` starts this much later (a slow device)."""
        signature = "accel.openreg.set_stream_latency(stream, microseconds)"
        check_type(stream, _C.Stream, "stream", signature)
        check_type(microseconds, (int, float), "microseconds", signature)
        _native.set_stream_latency(stream, microseconds)

    def clear_faults(self) -> None:
        """Cancels every injected fault."""
        _native.clear_faults()

    def set_execution_units(self, device: DeviceLike, units: int) -> None:
        """How many operations the device runs at once."""
        _native.set_execution_units(index_for("openreg", device), units)

    def execution_units_state(self, device: DeviceLike) -> Dict[str, int]:
        """{'units', 'busy', 'waiting'} of the device now."""
        return dict(_native.execution_units_state(index_for("openreg", device)))

    def config(self) -> Dict[str, Any]:
        """The active openreg configuration (initialises openreg)."""
        return dict(_native.config())

    def library_path(self) -> str:
        """Path of the libaccel_openreg.so in use."""
        return str(_native.library_path())


# Registered before the surface is made, which looks the hooks up.
_native.register_backend()
surface = OpenReg("openreg", "accel.openreg")

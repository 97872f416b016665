"""accel.openreg: the simulated openreg accelerator in the shape of torch.cuda.

Everything a backend module has (accel._backend.populate: devices, streams,
events, memory, graphs, random numbers), plus openreg's extras: device fills
from a generator, fault injection and execution units. Importing it registers
the openreg hooks (bundled with the package) but touches no device.
"""

from __future__ import annotations as _annotations

import sys
from typing import Any as _Any, Dict as _Dict, Optional as _Optional

from .. import _C
from . import _native
from .._backend import _modules, populate as _populate
from .._devices import DeviceLike, check_type as _check_type, index_for as _index_for
from .._lazy import state as _state
from . import random
from .random import *  # noqa: F401,F403  (manual_seed, get_rng_state, ...)

_native.register_backend()
_populate(globals(), "openreg", random.RANDOM)
_modules["openreg"] = sys.modules[__name__]
_lazy_state = _state("openreg")


def fill_uniform(buffer: _C.Buffer, low: float = 0.0, high: float = 1.0, *,
                 dtype: str = "float32", generator: _Optional[_C.Generator] = None,
                 stream: _Optional[_C.Stream] = None) -> None:
    """Enqueues a uniform fill of an openreg device buffer (float32 or float64
    elements) on `stream` (default: the buffer device's current stream), from
    `generator` (default: that device's default generator). The numbers equal
    the host fill's for the same (seed, offset). A buffer on another device
    raises InvalidArgumentError."""
    _lazy_state.lazy_init()
    _native.fill_uniform(buffer, low, high, dtype, generator, stream)


def fill_normal(buffer: _C.Buffer, mean: float = 0.0, std: float = 1.0, *,
                dtype: str = "float32", generator: _Optional[_C.Generator] = None,
                stream: _Optional[_C.Stream] = None) -> None:
    """Like fill_uniform, normal(mean, std)."""
    _lazy_state.lazy_init()
    _native.fill_normal(buffer, mean, std, dtype, generator, stream)


def fail_nth_allocation(nth: int) -> None:
    """The nth openreg allocation from now raises OutOfMemoryError (0 cancels)."""
    _native.fail_nth_allocation(nth)


def lose_device_after(device: DeviceLike, operations: int) -> None:
    """The device is lost after `operations` more operations (DeviceError after)."""
    _native.lose_device_after(_index_for("openreg", device), operations)


def is_device_lost(device: DeviceLike) -> bool:
    """True once the device is lost."""
    return bool(_native.is_device_lost(_index_for("openreg", device)))


def set_stream_latency(stream: _C.Stream, microseconds: float) -> None:
    """Every operation on `stream` starts this much later (a slow device)."""
    signature = "accel.openreg.set_stream_latency(stream, microseconds)"
    _check_type(stream, _C.Stream, "stream", signature)
    _check_type(microseconds, (int, float), "microseconds", signature)
    _native.set_stream_latency(stream, microseconds)


def clear_faults() -> None:
    """Cancels every injected fault."""
    _native.clear_faults()


def set_execution_units(device: DeviceLike, units: int) -> None:
    """How many operations the device runs at once."""
    _native.set_execution_units(_index_for("openreg", device), units)


def execution_units_state(device: DeviceLike) -> _Dict[str, int]:
    """{'units', 'busy', 'waiting'} of the device now."""
    return dict(_native.execution_units_state(_index_for("openreg", device)))


def config() -> _Dict[str, _Any]:
    """The active openreg configuration (initialises openreg)."""
    return dict(_native.config())


def library_path() -> str:
    """Path of the libaccel_openreg.so in use."""
    return str(_native.library_path())

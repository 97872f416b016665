"""The device-agnostic API, in the shape of torch.accelerator.

Every function works on "the" accelerator: the one chosen with
``set_current_accelerator`` or else the first available registered backend
(Context::currentAccelerator). With none, the probes answer benignly
(``is_available()`` False, ``device_count()`` 0) and the rest raise
NotAvailableError.

Thread-safety: every function is thread-safe; the current device and stream
are per thread.
"""

from __future__ import annotations as _annotations

import typing as _typing
from typing import Any as _Any, Optional as _Optional

from . import _C
from ._backend import Backend as _Backend, surface as _surface
from ._devices import DeviceLike as _DeviceLike, as_device as _as_device, index_for as _index_for
from ._lazy import state as _state
from ._random import check_seed as _check_seed


def current_accelerator(check_available: bool = False) -> _Optional[_C.Device]:
    """The accelerator as a Device without index (e.g. Device('openreg')), or None.

    With check_available=True, also None when its backend reports no usable
    device (torch.accelerator.current_accelerator's runtime check). Never raises.
    """
    name = _C._current_accelerator()
    if name is None:
        return None
    if check_available and not _C.Hooks(name).is_available():
        return None
    return _C.Device(name)


def set_current_accelerator(device_type: str) -> None:
    """Chooses the accelerator explicitly (a registered type, not cpu).

    An unregistered name raises InvalidArgumentError listing the registered
    backends; a non-str raises TypeError.
    """
    _C._set_current_accelerator(device_type)


def _module() -> _Backend:
    return _surface(_current_type())


def _current_type() -> str:
    name = _C._current_accelerator()
    if name is None:
        raise _C.NotAvailableError(
            "no accelerator is available: registered backends are "
            f"{_C._registered_types() or 'none'}; load one with accel.load_backend(path) or "
            "ACCEL_PLUGINS")
    return name


def _module_for(device: _DeviceLike, what: str = "this function") -> _Backend:
    """The current accelerator's backend module, after checking that `device`
    (None, an index, or text / a Device) names a device of that accelerator:
    torch.accelerator's functions accept only the current accelerator's type.
    Raises InvalidArgumentError (a ValueError) naming the expected type."""
    name = _current_type()
    if isinstance(device, (str, _C.Device)):
        given = _as_device(device)
        if given.type != name:
            hint = ("cpu is not an accelerator" if given.type == "cpu" else
                    f"use accel.{given.type}.{what} for that backend, or "
                    f"accel.set_current_accelerator({given.type!r}) first")
            raise _C.InvalidArgumentError(
                f"{what}: expected a device of the current accelerator '{name}', got "
                f"'{given}' ({hint})")
    return _surface(name)


def _check_index(module: _Backend, device: _DeviceLike, what: str) -> None:
    """Refuses a device index out of range without initialising the backend
    (the no-op paths before initialisation still check their argument); an
    accelerator without devices raises NotAvailableError saying why (its
    initialisation, which fails)."""
    index = _index_for(module.device_type, device)
    count = module.device_count()
    if count == 0:
        module.init()
    if index < -1 or index >= count:
        raise _C.InvalidArgumentError(
            f"{what}: device index {index} out of range [0, {count}) for "
            f"'{module.device_type}'")


def is_available() -> bool:
    """True when there is an accelerator with at least one device (torch's
    rule: by device count). Never raises."""
    return device_count() > 0


def device_count() -> int:
    """Devices of the accelerator; 0 without one. Never raises."""
    name = _C._current_accelerator()
    return 0 if name is None else int(_C.Hooks(name).device_count())


def current_device_index() -> int:
    """This thread's current device index of the accelerator."""
    return int(_module().current_device())


def set_device_index(device: _DeviceLike) -> None:
    """Makes `device` (an index, or 'type:N' of the current accelerator) this
    thread's current device. A device of another type raises
    InvalidArgumentError (a ValueError). A negative index changes nothing (as
    torch.accelerator.set_device_index)."""
    if isinstance(device, int) and not isinstance(device, bool) and device < 0:
        return
    _module_for(device, "set_device_index").set_device(device)


# The calls with an int index are answered in C++ (python/src/device_index_calls.cpp,
# which says why); every other argument, and every error, takes the Python
# definition above, whose signature (and so whose type) the C++ function has.
if not _typing.TYPE_CHECKING:
    set_device_index = _C._fast_set_device_index(set_device_index)


def _device_index_fallback(device: _DeviceLike) -> _Any:
    # What `device_index(device)` delegates to for arguments other than None
    # and an int index: the backend module's device guard, after its checks.
    return _module().device(device)


# device_index(device): context manager; `device` (an index, or 'type:N' /
# an accel.Device of the current accelerator) is this thread's current device
# inside the block, the previous one after it (also on exceptions). None
# changes nothing. A native class (python/src/device_index_calls.cpp).
device_index = _C._device_index_class(_device_index_fallback)


def synchronize(device: _DeviceLike = None) -> None:
    """Waits for all work on `device` (default: current) of the current
    accelerator. Releases the GIL. Before the backend is initialised there is
    no work: it does nothing and does not initialise it (torch's rule); the
    device argument is checked either way."""
    module = _module_for(device, "synchronize")
    if not module.is_initialized():
        _check_index(module, device, "synchronize")
        return
    module.synchronize(device)


# current_stream(device=None): this thread's current stream of `device`
# (default: the current accelerator's current device), as an object of the
# backend module's Stream class, the same object each time for the same
# stream: one C++ call (the speed goal is 0.25 us).
current_stream = _C._accelerator_current_stream


def set_stream(stream: _C.Stream) -> None:
    """Makes `stream` current for its device on this thread, and its device
    the current device (as torch.accelerator.set_stream). A non-Stream raises
    TypeError, a stream of another backend than the current accelerator
    InvalidArgumentError (a ValueError)."""
    if not isinstance(stream, _C.Stream):
        raise TypeError(f"set_stream expects an accel.Stream, got {type(stream).__name__}")
    name = _current_type()
    if stream.device_type != name:
        raise _C.InvalidArgumentError(
            f"set_stream: expected a stream of the current accelerator '{name}', got one of "
            f"'{stream.device}' (use accel.{stream.device_type}.set_stream for that backend, "
            f"or accel.set_current_accelerator({stream.device_type!r}) first)")
    _surface(name).set_stream(stream)


def manual_seed(seed: int) -> None:
    """Seeds the CPU generator and every device of every registered backend.

    Initialised backends are seeded now (Context::manualSeed); the others at
    their initialisation. In a fork child, a backend started in the parent
    (which the child cannot use) is skipped.
    """
    seed = _check_seed(seed)
    _C._manual_seed(seed)
    for name in _C._registered_types():
        # A backend started before fork() is refused in this child: skipped,
        # as Context::manualSeed skips it, so forked workers may reseed.
        if _C.Hooks(name).is_poisoned_by_fork():
            continue
        if not _state(name).is_initialized():
            _surface(name).manual_seed_all(seed)


# torch.accelerator's older names (deprecated there, kept for the code that uses them).
current_device_idx = current_device_index
set_device_idx = set_device_index


__all__ = ["current_accelerator", "current_device_idx", "set_device_idx", "set_current_accelerator", "is_available", "device_count",
           "current_device_index", "set_device_index", "device_index", "synchronize",
           "current_stream", "set_stream", "manual_seed"]

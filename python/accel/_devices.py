"""Turning the device arguments users pass (None, an int, 'openreg:1',
accel.Device) into device indices of one backend, and refusing an argument
of the wrong type with the public signature of the call.

Thread-safety: pure functions.
"""

from __future__ import annotations

import operator as _operator

from typing import Optional, Tuple, Union

from . import _C

DeviceLike = Union[None, int, str, _C.Device]


def index_for(type_name: str, device: DeviceLike) -> int:
    """The device index `device` names for backend `type_name`; -1 = current.

    Raises InvalidArgumentError for a device of another type or bad text.
    """
    if device is None:
        return -1
    if isinstance(device, bool):
        raise _C.InvalidArgumentError(f"a device index must be an int, not {device!r}")
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _C.Device(device)
    if isinstance(device, _C.Device):
        if device.type != type_name:
            raise _C.InvalidArgumentError(
                f"device '{device}' is not a '{type_name}' device; pass an index or "
                f"'{type_name}:N'")
        index: Optional[int] = device.index
        return -1 if index is None else index
    raise _C.InvalidArgumentError(
        f"expected a device index, text like '{type_name}:0' or an accel.Device, "
        f"got {type(device).__name__}")


def is_index(value: object) -> bool:
    """True for an int or anything that converts to one losslessly
    (operator.index: NumPy's integer scalars), as the bindings accept."""
    try:
        _operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return False
    return True


def check_type(value: object, kinds: Union[type, Tuple[type, ...]], name: str,
               signature: str) -> None:
    """TypeError "<signature>: <name> must be <kinds>, not <type>" unless
    `value` is an instance of `kinds`. The package's functions call it
    before a binding whose own refusal would list pybind11's internal
    overloads (a bool passes for an int: the binding refuses it naming the
    argument and the value)."""
    kinds_tuple = kinds if isinstance(kinds, tuple) else (kinds,)
    if isinstance(value, kinds_tuple):
        return
    # What the bindings accept too: an int is anything with __index__ (NumPy's
    # integers, as torch takes them), a bool also NumPy's bool.
    if int in kinds_tuple and is_index(value):
        return
    if bool in kinds_tuple and type(value).__module__ == "numpy" and \
            type(value).__name__ in ("bool_", "bool"):
        return
    names = " or ".join(k.__name__ for k in kinds_tuple)
    raise TypeError(f"{signature}: {name} must be {names}, not {type(value).__name__}")


def as_device(device: Union[str, _C.Device]) -> _C.Device:
    """`device` as an accel.Device (parsing text)."""
    return device if isinstance(device, _C.Device) else _C.Device(device)

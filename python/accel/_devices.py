"""Turning the device arguments users pass (None, an int, 'openreg:1',
accel.Device) into device indices of one backend.

Thread-safety: pure functions.
"""

from __future__ import annotations

from typing import Optional, Union

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


def as_device(device: Union[str, _C.Device]) -> _C.Device:
    """`device` as an accel.Device (parsing text)."""
    return device if isinstance(device, _C.Device) else _C.Device(device)

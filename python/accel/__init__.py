"""accel: accelerator devices from Python, through accelhooks' backends.

    import accel
    accel.openreg.manual_seed(42)            # one backend, torch.cuda's shape
    accel.current_accelerator()              # torch.accelerator's shape
    buf = accel.empty(1 << 20, device="openreg:0")

Importing accel touches no device: it registers the bundled openreg backend
and runs the core's plugin discovery, as `accel info` does (ACCEL_PLUGINS,
ACCEL_PLUGIN_PATH, else libaccel's own directory; ACCEL_AUTOLOAD=0 turns it
off), which registers backends without initialising them. A backend initialises on the first call that needs it.
docs/python.md tells the whole story.
"""

from __future__ import annotations as _annotations

import atexit as _atexit
import os as _os
import sys as _sys
import types as _types
from typing import Any as _Any, Dict as _Dict, List as _List, Union as _Union

from . import _C
from ._C import (  # noqa: F401  (the public names)
    Buffer,
    Device,
    DeviceError,
    DeviceProperties,
    Error,
    Event,
    Generator,
    InvalidArgumentError,
    NotAvailableError,
    NotSupportedError,
    OutOfMemoryError,
    Stream,
)

for _cls in (Buffer, Device, DeviceError, DeviceProperties, Error, Event, Generator,
             InvalidArgumentError, NotAvailableError, NotSupportedError, OutOfMemoryError,
             Stream):
    try:
        _cls.__module__ = "accel"
    except (AttributeError, TypeError):
        pass

from ._devices import DeviceLike
from ._devices import is_index as _is_index
from ._lazy import state as _state


def load_backend(path: str) -> _Dict[str, _Any]:
    """Loads a backend plugin (a libaccel_<name>.so) and returns its load record
    (path, status, registered types, ...). Raises NotAvailableError with the
    loader's reason when it did not load. Releases the GIL while loading."""
    return dict(_C._load_backend(_os.fspath(path)))


def plugin_report() -> _List[_Dict[str, _Any]]:
    """Every plugin load attempt so far (autoload and load_backend), as dicts."""
    return [dict(record) for record in _C._plugin_report()]


def autoload_state() -> str:
    """Where the once-per-process autoload stands ('ran', 'disabled', ...)."""
    return str(_C._autoload_state())


def empty(nbytes: int, device: _Union[None, str, Device] = None, *,
          pinned: bool = False) -> Buffer:
    """`nbytes` uninitialised bytes: on `device` ('openreg:0'; default cpu), or
    page-locked host memory of the accelerator (or of `device`) with pinned=True.
    Raises InvalidArgumentError for a negative size or a bad device,
    OutOfMemoryError when the memory is not there, TypeError for an argument
    of the wrong type."""
    if not _is_index(nbytes):  # a bool is the binding's to refuse, naming it
        raise TypeError("accel.empty(nbytes: int, device=None, *, pinned=False): nbytes "
                        f"must be an int, not {type(nbytes).__name__}")
    if device is not None and not isinstance(device, (str, Device)):
        raise TypeError("accel.empty(nbytes: int, device=None, *, pinned=False): device "
                        "must be text like 'openreg:0' or an accel.Device, not "
                        f"{type(device).__name__}")
    if device is not None:
        type_name = device.type if isinstance(device, Device) else Device(device).type
        if type_name != "cpu":
            _state(type_name).lazy_init()
    elif pinned:
        name = _C._current_accelerator()
        if name is not None:
            _state(name).lazy_init()
    return _C._empty(nbytes, device, pinned)


def validate(mode: _Union[None, bool, str] = None) -> str:
    """Turns the validation layer on or off and returns the mode now.

    ``mode``: ``"log"`` (or ``True``) prints each violation and lets the call
    go on; ``"throw"`` raises ``ValueError`` before the backend sees the call;
    ``"abort"`` prints and aborts; ``"off"`` (or ``False``) turns it off.
    ``None`` changes nothing. Each report names the hook, its arguments, the
    backend, the device, the rule broken and the Python line it came from;
    at exit, what was never released is listed with where it was made
    (docs/validation.md). ``ACCEL_VALIDATE`` turns it on at start-up.
    """
    if mode is True:
        mode = "log"
    elif mode is False:
        mode = "off"
    return _C._validate(mode)


# The leak report is printed once the interpreter is gone (libaccel's exit
# handler): the Python lines of what is still tracked are resolved before.
_atexit.register(_C._resolve_validation_stacks)


def registered_backends() -> _List[str]:
    """Names of the device types with a registered backend."""
    return list(_C._registered_types())


# Plugin discovery, the core's rule (accel::discoverPlugins), the one `accel
# info` follows: ACCEL_PLUGINS, ACCEL_PLUGIN_PATH and ACCEL_AUTOLOAD=0, then,
# with ACCEL_PLUGIN_PATH unset, the directory holding libaccel.so (the C++
# loader records every attempt in plugin_report()). Before openreg's own
# registration, so that a plugin path naming this very libaccel_openreg.so
# registers it as a plugin.
_C._autoload()

from ._backend import backend  # noqa: E402
from . import cuda  # noqa: E402,F401

try:
    from . import openreg  # noqa: E402,F401
except ModuleNotFoundError as _missing:  # accel built without the openreg backend
    if _missing.name != "accel.openreg._native":
        raise

from . import memory  # noqa: E402,F401
from .memory import (  # noqa: E402,F401  (torch.accelerator has these at its top level)
    empty_cache,
    get_memory_info,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_stats_as_nested_dict,
    reset_accumulated_memory_stats,
    reset_peak_memory_stats,
)
from .accelerator import (  # noqa: E402,F401
    current_accelerator,
    current_device_idx,
    current_device_index,
    current_stream,
    device_count,
    device_index,
    is_available,
    manual_seed,
    set_current_accelerator,
    set_device_idx,
    set_device_index,
    set_stream,
    synchronize,
)


def __getattr__(name: str) -> _types.ModuleType:
    """accel.opencl (each backend package with a native module) and
    accel.<type> of every registered backend, made on first
    access, as torch.cuda is an attribute of torch. Not at import: importing
    accel.opencl registers its hooks, which makes it a candidate for the
    current accelerator, and `import accel` neither registers it nor
    discovers devices (docs/lifecycle.md). Other names: AttributeError."""
    if not name.startswith("_") and f"{__name__}.{name}._native" in _sys.modules:
        # A backend package whose native module the binding built (accel.opencl).
        import importlib
        return importlib.import_module(f".{name}", __name__)
    if not name.startswith("_") and name in _C._registered_types():
        return backend(name)
    raise AttributeError(f"module 'accel' has no attribute {name!r}")

__version__ = "0.1.0"

__all__ = [
    "Buffer", "Device", "DeviceError", "DeviceProperties", "Error", "Event", "Generator",
    "InvalidArgumentError", "NotAvailableError", "NotSupportedError", "OutOfMemoryError",
    "DeviceLike", "Stream", "accelerator", "autoload_state", "backend", "cuda", "current_accelerator",
    "current_device_idx", "current_device_index", "current_stream", "device_count",
    "device_index", "empty", "empty_cache", "get_memory_info", "is_available", "load_backend",
    "manual_seed", "max_memory_allocated", "max_memory_reserved", "memory", "memory_allocated",
    "memory_reserved", "memory_stats", "memory_stats_as_nested_dict", "openreg", "plugin_report",
    "registered_backends", "reset_accumulated_memory_stats", "reset_peak_memory_stats",
    "set_current_accelerator", "set_device_idx", "set_device_index", "set_stream",
    "synchronize", "validate",
]
# Not "opencl": `from accel import *` (and anything else that walks __all__)
# would import accel.opencl, registering its hooks and so changing the
# current accelerator, which importing accel never does. (accel.cuda, listed,
# is imported with accel and registers nothing.)

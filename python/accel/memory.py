"""Device-agnostic memory functions (torch.cuda.memory's shape) for the
current accelerator. A device given as 'type:N' or a Device must be of the
current accelerator (torch.accelerator's rule): another type raises
InvalidArgumentError (a ValueError); use that backend's module
(accel.opencl.memory_allocated('opencl:0')) for it. The package re-exports
the functions torch.accelerator has at its top level (accel.memory_allocated).

For a backend that does not declare the memory (or memory_history) hook
group, each raises NotSupportedError naming the backend and the group.
Thread-safety: thread-safe.
"""

from __future__ import annotations as _annotations

from typing import (Any as _Any, Dict as _Dict, List as _List, Optional as _Optional,
                    Tuple as _Tuple, Union as _Union)

from . import _C, _memory_report
from .accelerator import _module, _module_for
from ._devices import DeviceLike as _DeviceLike


# memory_stats(device=None): allocator statistics with torch's flattened keys
# ("allocated_bytes.all.current", ...), sorted; {} before the backend is
# initialised (it stays uninitialised). One C++ call (goal: 5 us).
memory_stats = _C._accelerator_memory_stats


def memory_stats_as_nested_dict(device: _DeviceLike = None) -> _Dict[str, _Any]:
    """memory_stats() with its dotted keys made nested dicts
    ({"allocated_bytes": {"all": {"current": ...}}}), as torch.cuda's."""
    return _memory_report.nested(memory_stats(device))


def memory_allocated(device: _DeviceLike = None) -> int:
    """Bytes handed to callers now."""
    return _module_for(device, "memory_allocated").memory_allocated(device)


def max_memory_allocated(device: _DeviceLike = None) -> int:
    """Peak of memory_allocated()."""
    return _module_for(device, "max_memory_allocated").max_memory_allocated(device)


def memory_reserved(device: _DeviceLike = None) -> int:
    """Bytes obtained from the device now."""
    return _module_for(device, "memory_reserved").memory_reserved(device)


def max_memory_reserved(device: _DeviceLike = None) -> int:
    """Peak of memory_reserved()."""
    return _module_for(device, "max_memory_reserved").max_memory_reserved(device)


def reset_peak_memory_stats(device: _DeviceLike = None) -> None:
    """Sets the peaks to the current values. Before the backend is
    initialised there is nothing to reset: does nothing, initialises nothing."""
    _module_for(device, "reset_peak_memory_stats").reset_peak_memory_stats(device)


def empty_cache() -> None:
    """Returns cached, unused memory of the accelerator to the device."""
    _module().empty_cache()


def reset_accumulated_memory_stats(device: _DeviceLike = None) -> None:
    """Sets the cumulative figures ("*.allocated", "*.freed") and the event
    counters of memory_stats() to 0; current values and peaks stay. Before
    the backend is initialised: does nothing, initialises nothing."""
    module = _module_for(device, "reset_accumulated_memory_stats")
    module.reset_accumulated_memory_stats(device)


def get_memory_info(device: _DeviceLike = None) -> _Tuple[int, int]:
    """(free, total) bytes of the device; what the allocator caches counts as used."""
    return _module_for(device, "get_memory_info").get_memory_info(device)


def set_per_process_memory_fraction(fraction: float, device: _DeviceLike = None) -> None:
    """Caps this process's reserved memory on the device at fraction x its total
    (0 <= fraction <= 1); allocations past it raise OutOfMemoryError."""
    module = _module_for(device, "set_per_process_memory_fraction")
    module.set_per_process_memory_fraction(fraction, device)


def memory_summary(device: _DeviceLike = None, abbreviated: bool = False) -> str:
    """memory_stats() as a readable table."""
    return _module_for(device, "memory_summary").memory_summary(device, abbreviated)


def memory_snapshot() -> _List[_Dict[str, _Any]]:
    """The segments of every device of the accelerator (_snapshot()["segments"])."""
    return _module().memory_snapshot()


def host_memory_stats() -> _Dict[str, int]:
    """The accelerator's pinned host memory cache statistics (torch's keys)."""
    return _module().host_memory_stats()


def _record_memory_history(enabled: _Union[None, str, bool] = "all",
                           context: _Optional[str] = "all", stacks: str = "all",
                           max_entries: int = 100000) -> None:
    """Starts ('all' or 'state') or stops (None) recording allocation history;
    torch's older bool form: True is 'all', False None."""
    _module()._record_memory_history(enabled, context, stacks, max_entries)


def _snapshot(device: _DeviceLike = None) -> _Dict[str, _Any]:
    """Allocator state and history in torch.cuda.memory._snapshot()'s form."""
    return _module_for(device, "_snapshot")._snapshot(device)


def _dump_snapshot(filename: str = "dump_snapshot.pickle") -> None:
    """Pickles _snapshot() for PyTorch's memory_viz."""
    _module()._dump_snapshot(filename)


__all__ = ["memory_stats", "memory_stats_as_nested_dict", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "empty_cache",
           "reset_accumulated_memory_stats", "get_memory_info",
           "set_per_process_memory_fraction", "memory_summary", "memory_snapshot",
           "host_memory_stats", "_record_memory_history", "_snapshot", "_dump_snapshot"]

"""Per-backend modules in the shape of torch.cuda, built from a backend's
hooks and capabilities: accel.openreg, accel.cuda and accel.backend("x").

`populate(namespace, type_name)` fills a module's namespace. Probes
(is_available, is_built, device_count, current_device) are argument-free
pybind11 functions bound to the type (Hooks.probes), so a call costs one
pybind11 call. Everything
that needs an initialised backend initialises it first (accel._lazy). A hook
group the backend does not declare raises NotSupportedError naming the
backend and the group (the C++ hooks say so).

Thread-safety: every function is thread-safe; the current device and stream
are per thread, as in C++.
"""

from __future__ import annotations

import pickle
import sys
import types
from typing import Any, Dict, List, Optional, Tuple, Union

from . import _C, _memory_report
from ._devices import DeviceLike, check_type, index_for
from ._lazy import state
from ._random import BackendRandom


def populate(namespace: Dict[str, Any], type_name: str,
             random: Optional[BackendRandom] = None) -> None:
    """Defines the torch.cuda-shaped API of backend `type_name` in `namespace`."""
    hooks = _C.Hooks(type_name)
    lazy = state(type_name)
    if random is None:
        random = BackendRandom(type_name)

    def _index(device: DeviceLike) -> int:
        return index_for(type_name, device)

    def _own(what: str, obj: Any, kind: Any, kind_name: str) -> None:
        # A per-backend module acts on its own backend only: another's stream
        # or event would change or wait on that backend behind its name.
        if not isinstance(obj, kind):
            raise TypeError(f"{what} expects an accel.{kind_name} of '{type_name}' "
                            f"(accel.{type_name}.{kind_name}), got {type(obj).__name__}")
        if obj.device_type != type_name:
            raise _C.InvalidArgumentError(
                f"{what} expects an accel.{kind_name} of '{type_name}' "
                f"(accel.{type_name}.{kind_name}), got one of '{obj.device_type}' "
                f"({obj!r}); use accel.{obj.device_type} or accel.set_stream for it")

    def init() -> None:
        """Initialises the backend now (otherwise the first call that needs it does)."""
        lazy.lazy_init()

    def is_initialized() -> bool:
        """True once the backend is initialised in this process. Never initialises."""
        return lazy.is_initialized()

    def set_device(device: DeviceLike) -> None:
        """Makes `device` this thread's current device. Bad index: InvalidArgumentError."""
        hooks.set_device(_index(device))

    class device:
        """Context manager: `device` is current inside the block, the previous one
        after it (also when the block raises). None or -1 changes nothing."""

        def __init__(self, device: DeviceLike) -> None:
            self.index = _index(device)
            self.previous = -1

        def __enter__(self) -> "device":
            if self.index != -1:
                self.previous = hooks.exchange_device(self.index)
            return self

        def __exit__(self, *exc: object) -> None:
            if self.index != -1:
                hooks.set_device(self.previous)

    def synchronize(device: DeviceLike = None) -> None:
        """Waits for all work on `device` (default: current). Releases the GIL."""
        lazy.lazy_init()
        hooks.synchronize(_index(device))

    def get_device_properties(device: DeviceLike = None) -> _C.DeviceProperties:
        """Typed properties of `device` (default: current)."""
        lazy.lazy_init()
        return hooks.device_properties(_index(device))

    def get_device_name(device: DeviceLike = None) -> str:
        """The device's name."""
        return str(get_device_properties(device).name)

    def get_device_capability(device: DeviceLike = None) -> Tuple[int, int]:
        """(major, minor) of the device's architecture version; (0, 0) if none."""
        props = get_device_properties(device)
        return int(props.major), int(props.minor)

    # ---- streams and events ----
    class Stream(_C.Stream):
        """A stream of this backend: Stream(device=None, priority=0) takes a new
        one from the backend's pool (priority as in torch: 0 is the default and
        lowest, lower numbers run first, clamped to priority_range()).
        `with s:` makes it current."""

        def __init__(self, device: DeviceLike = None, priority: int = 0, *,
                     stream_id: Optional[int] = None) -> None:
            check_type(priority, int, "priority",
                       f"accel.{type_name}.Stream(device=None, priority=0)")
            lazy.lazy_init()
            index = _index(device)
            if index == -1:
                index = hooks.current_device()
            if stream_id is not None:
                super().__init__(stream_id, index, _C._device_type_code(type_name))
                return
            super().__init__(_C.Device(type_name, index), priority)

        def record_event(self, event: Optional[_C.Event] = None) -> _C.Event:
            """Records `event` (a new Event of this backend if None) on this
            stream and returns it."""
            if event is None:
                event = Event()
            _own("Stream.record_event", event, _C.Event, "Event")
            event.record(self)
            return event

    class Event(_C.Event):
        """An event of this backend (created on its first record)."""

        def __init__(self, enable_timing: bool = False, blocking: bool = False,
                     interprocess: bool = False) -> None:
            signature = (f"accel.{type_name}.Event(enable_timing=False, blocking=False, "
                         "interprocess=False)")
            for name, flag in (("enable_timing", enable_timing), ("blocking", blocking),
                               ("interprocess", interprocess)):
                check_type(flag, (bool, int), name, signature)
            lazy.lazy_init()
            # The backend decides: NotSupportedError where its events cannot
            # be shared, InvalidArgumentError with enable_timing on cuda.
            super().__init__(type_name, enable_timing, blocking, interprocess)

    # Cached stream objects of this backend's Stream class (accel._C).
    stream_functions = _C._stream_functions(type_name, Stream)
    current_stream = stream_functions["current_stream"]
    default_stream = stream_functions["default_stream"]

    def set_stream(stream: _C.Stream) -> None:
        """Makes `stream` current for its device on this thread, and its device
        the current device (torch.accelerator.set_stream does both). A
        non-Stream raises TypeError; a stream of another backend
        InvalidArgumentError (a ValueError)."""
        _own("set_stream", stream, _C.Stream, "Stream")
        lazy.lazy_init()
        hooks.set_device(stream.device_index)
        _C._set_stream(stream)

    class stream:
        """Context manager over a stream, or nothing for None (torch.cuda.stream)."""

        def __init__(self, s: Optional[_C.Stream]) -> None:
            if s is not None:
                _own("stream", s, _C.Stream, "Stream")
            self.s = s

        def __enter__(self) -> Optional[_C.Stream]:
            if self.s is not None:
                self.s.__enter__()
            return self.s

        def __exit__(self, *exc: object) -> None:
            if self.s is not None:
                self.s.__exit__(*exc)

    # ---- memory ----
    # memoryStats as a dict with torch's flattened keys
    # ("allocated_bytes.all.current", ...), sorted by key; {} before the
    # backend is initialised (which it does not initialise). One C++ call.
    memory_stats = _C._memory_stats_function(type_name)

    def memory_stats_as_nested_dict(device: DeviceLike = None) -> Dict[str, Any]:
        """memory_stats() with its dotted keys made nested dicts
        ({"allocated_bytes": {"all": {"current": ...}}}), as torch.cuda's."""
        return _memory_report.nested(memory_stats(device))

    def memory_allocated(device: DeviceLike = None) -> int:
        """Bytes handed out to callers now."""
        return int(memory_stats(device).get("allocated_bytes.all.current", 0))

    def max_memory_allocated(device: DeviceLike = None) -> int:
        """Peak of memory_allocated() since the start or the last reset."""
        return int(memory_stats(device).get("allocated_bytes.all.peak", 0))

    def memory_reserved(device: DeviceLike = None) -> int:
        """Bytes obtained from the device now (>= allocated with caching)."""
        return int(memory_stats(device).get("reserved_bytes.all.current", 0))

    def max_memory_reserved(device: DeviceLike = None) -> int:
        """Peak of memory_reserved()."""
        return int(memory_stats(device).get("reserved_bytes.all.peak", 0))

    def _initialized_index(device: DeviceLike, what: str) -> Optional[int]:
        # The index for a memory call that has nothing to do before
        # initialisation (torch's rule for the reset_* functions): None then,
        # after the checks the call would make, none of which initialises.
        index = _index(device)
        if lazy.is_initialized():
            return index
        count = hooks.device_count()
        if count == 0:
            # No device (or no backend): initialising fails and says why
            # (NotAvailableError), as the call always did.
            lazy.lazy_init()
            return index
        if not hooks.supports("memory"):
            return index  # the hook raises NotSupportedError naming the backend
        if index < -1 or index >= count:
            raise _C.InvalidArgumentError(
                f"{what}: device index {index} out of range [0, {count}) for '{type_name}'")
        return None

    def reset_peak_memory_stats(device: DeviceLike = None) -> None:
        """Sets the peaks to the current values. Before the backend is
        initialised there are no figures: does nothing, initialises nothing."""
        index = _initialized_index(device, "reset_peak_memory_stats")
        if index is not None:
            hooks.reset_peak_memory_stats(index)

    def empty_cache() -> None:
        """Returns cached, unused device memory to the device. Does nothing
        (and does not initialise the backend) before initialisation."""
        if lazy.is_initialized():
            hooks.empty_cache()

    def reset_accumulated_memory_stats(device: DeviceLike = None) -> None:
        """Sets the cumulative figures of memory_stats() ("*.allocated",
        "*.freed") and its event counters ("num_ooms", "num_alloc_retries",
        "num_sync_all_streams", "num_device_alloc", "num_device_free") to 0;
        current values and peaks stay. Before the backend is initialised:
        does nothing, initialises nothing."""
        index = _initialized_index(device, "reset_accumulated_memory_stats")
        if index is not None:
            hooks.reset_accumulated_memory_stats(index)

    def get_memory_info(device: DeviceLike = None) -> Tuple[int, int]:
        """(free, total) bytes of `device` (default: current), as
        torch.cuda.mem_get_info: memory the caching allocator holds counts as
        used. Initialises the backend. NotSupportedError where the backend
        cannot tell its capacity."""
        lazy.lazy_init()
        free, total = hooks.memory_info(_index(device))
        return int(free), int(total)

    def mem_get_info(device: DeviceLike = None) -> Tuple[int, int]:
        """torch.cuda's name for get_memory_info: (free, total) bytes."""
        return get_memory_info(device)

    def set_per_process_memory_fraction(fraction: float, device: DeviceLike = None) -> None:
        """Caps what this process's allocator may reserve on `device` at
        `fraction` x its total memory (0 <= fraction <= 1; 1 lifts the cap);
        past it, allocations raise OutOfMemoryError. A fraction outside [0, 1]
        is an InvalidArgumentError, a non-number a TypeError."""
        if isinstance(fraction, bool) or not isinstance(fraction, (int, float)):
            raise TypeError("set_per_process_memory_fraction expects a float between 0 and "
                            f"1, got {type(fraction).__name__}")
        if not 0.0 <= float(fraction) <= 1.0:  # also refuses NaN
            raise _C.InvalidArgumentError(
                f"set_per_process_memory_fraction({fraction!r}): the fraction must be "
                "between 0 and 1 (the share of the device's total memory)")
        lazy.lazy_init()
        hooks.set_memory_fraction(float(fraction), _index(device))

    def memory_summary(device: DeviceLike = None, abbreviated: bool = False) -> str:
        """memory_stats(device) as a readable table (torch.cuda.memory_summary):
        current, peak, allocated and freed of each figure, by pool unless
        `abbreviated`. Does not initialise the backend (zeros before)."""
        index = _index(device)
        count = hooks.device_count()
        if index < -1 or index >= count:
            # memory_stats answers {} for any index before initialisation.
            raise _C.InvalidArgumentError(
                f"memory_summary: device index {index} out of range [0, {count}) for "
                f"'{type_name}'")
        stats = memory_stats(device)
        label = f"{type_name}:{index if index >= 0 else hooks.current_device()}"
        return _memory_report.summary(stats, label, abbreviated)

    def memory_snapshot() -> List[Dict[str, Any]]:
        """The segments of every device (torch.cuda.memory_snapshot():
        _snapshot()["segments"]); [] before the backend is initialised, which
        it does not initialise."""
        if not lazy.is_initialized():
            return []
        return list(hooks.memory_snapshot(-1, True, False)["segments"])

    def host_memory_stats() -> Dict[str, int]:
        """Statistics of the pinned host memory cache under
        torch.cuda.host_memory_stats' keys ("allocations.current",
        "active_bytes.peak", "num_host_alloc", ...; docs/python.md maps
        them); {} before the backend is initialised, which it does not
        initialise."""
        if not lazy.is_initialized():
            return {}
        return _memory_report.host_stats(hooks.host_memory_stats())

    def _record_memory_history(enabled: Union[None, str, bool] = "all",
                               context: Optional[str] = "all", stacks: str = "all",
                               max_entries: int = 100000) -> None:
        """Starts or stops recording allocation history, as torch.cuda.memory's.

        enabled: None (off), 'state' (live blocks keep their stacks, no
        trace) or 'all' (and a trace of max_entries events); torch's older
        bool form: True is 'all', False None. context: None
        records no stacks; 'state', 'alloc' and 'all' record the allocating
        stack (a free's entry shows its block's allocation stack). stacks:
        'python' (the allocating Python frames: code objects and offsets kept,
        resolved at snapshot time) or 'all' (those, then the C++ frames).
        """
        check_type(max_entries, int, "max_entries",
                   "_record_memory_history(enabled='all', context='all', stacks='all', "
                   "max_entries=100000)")
        if isinstance(enabled, bool):
            enabled = "all" if enabled else None
        if context not in (None, "state", "alloc", "all"):
            raise _C.InvalidArgumentError(
                f"_record_memory_history(context={context!r}): use None, 'state', 'alloc' "
                "or 'all'")
        if stacks not in ("python", "all"):
            raise _C.InvalidArgumentError(
                f"_record_memory_history(stacks={stacks!r}): use 'python' or 'all'")
        lazy.lazy_init()
        with_stacks = context is not None and enabled is not None
        hooks.record_memory_history(enabled, max_entries,
                                    record_stack=with_stacks and stacks == "all",
                                    python_stack=with_stacks)

    def _snapshot(device: DeviceLike = None) -> Dict[str, Any]:
        """The allocator state and history in torch.cuda.memory._snapshot()'s form."""
        lazy.lazy_init()
        index = _index(device)
        return dict(hooks.memory_snapshot(index, index == -1, True))

    def _dump_snapshot(filename: str = "dump_snapshot.pickle") -> None:
        """Pickles _snapshot() to `filename` (PyTorch's memory_viz reads it)."""
        snapshot = _snapshot()
        with open(filename, "wb") as f:
            pickle.dump(snapshot, f)

    # ---- graphs ----
    class Graph(_C.Graph):
        """A captured sequence of work, replayed with replay()."""

        def __init__(self, keep_graph: bool = False) -> None:
            lazy.lazy_init()
            super().__init__(type_name, keep_graph)

    class graph:
        """Context manager that captures the block's work on the current stream
        (or `stream`) into `g`."""

        def __init__(self, g: Graph, pool: Optional[Tuple[int, int]] = None,
                     stream: Optional[_C.Stream] = None,
                     capture_error_mode: str = "global") -> None:
            self.g = g
            self.pool = pool
            self.s = stream
            self.mode = capture_error_mode

        def __enter__(self) -> Graph:
            if self.s is not None:
                self.s.__enter__()
            try:
                self.g.capture_begin(self.pool, self.mode)
            except BaseException:
                if self.s is not None:
                    self.s.__exit__(None, None, None)
                raise
            return self.g

        def __exit__(self, *exc: object) -> None:
            try:
                self.g.capture_end()
            finally:
                if self.s is not None:
                    self.s.__exit__(*exc)

    namespace.update({"device_type": type_name, "_hooks": hooks, "_lazy": lazy,
                      "capabilities": hooks.capabilities, **hooks.probes()})
    # Keyed by each function's own name: the API's names are written once.
    api: Any
    for api in (init, is_initialized, set_device, device, synchronize, get_device_properties,
                get_device_name, get_device_capability, Stream, Event, current_stream,
                default_stream, set_stream, stream, memory_stats, memory_stats_as_nested_dict,
                memory_allocated,
                max_memory_allocated, memory_reserved, max_memory_reserved,
                reset_peak_memory_stats, empty_cache, reset_accumulated_memory_stats,
                get_memory_info, mem_get_info, set_per_process_memory_fraction,
                memory_summary, memory_snapshot, host_memory_stats, _record_memory_history,
                _snapshot, _dump_snapshot, Graph, graph):
        namespace[api.__name__] = api
    namespace.update(random.exports())
    for name in ("device", "Stream", "Event", "stream", "Graph", "graph"):
        namespace[name].__module__ = namespace.get("__name__", f"accel.backend.{type_name}")
        namespace[name].__qualname__ = name


_modules: Dict[str, types.ModuleType] = {}


def backend(type_name: str) -> types.ModuleType:
    """The torch.cuda-shaped module of backend `type_name` (any registered or
    built-in type), created on first use. Raises InvalidArgumentError for an
    unknown type name."""
    found = _modules.get(type_name)
    if found is not None:
        return found
    if type_name == "openreg" and "accel.openreg._native" in sys.modules:
        from . import openreg
        return openreg
    if type_name == "cuda":
        from . import cuda
        return cuda
    if type_name == "opencl" and "accel.opencl._native" in sys.modules:
        from . import opencl
        return opencl
    _C.Hooks(type_name)  # unknown names: InvalidArgumentError listing the known ones
    module = types.ModuleType(f"accel.backend.{type_name}",
                              f"The accel API of the '{type_name}' backend.")
    populate(module.__dict__, type_name)
    return _modules.setdefault(type_name, module)

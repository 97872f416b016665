"""The Python surface of one backend, in the shape of torch.cuda: the class
Backend, whose methods are the API of accel.openreg, accel.cuda,
accel.opencl and accel.backend("x").

A backend's package defines its surface (Backend, or a subclass with the
backend's extras: accel/openreg/_surface.py) and publishes it: publish()
puts the surface's API into the package's namespace and registers the
package as the module of that device type, which backend() returns. This
module imports no backend package: the packages import it.

Probes (is_available, is_built, device_count, current_device) are
argument-free pybind11 functions bound to the type (Hooks.probes), so a call
costs one pybind11 call. Everything that needs an initialised backend
initialises it first (accel._lazy). A hook group the backend does not
declare raises NotSupportedError naming the backend and the group (the C++
hooks say so).

Thread-safety: every method is thread-safe; the current device and stream
are per thread, as in C++. publish() and backend() take a lock.
"""

from __future__ import annotations

import importlib
import pickle
import sys
import threading
import types
from typing import Any, Callable, ClassVar, Dict, List, Optional, Protocol, Tuple, Type, Union, cast

from . import _C, _memory_report
from ._devices import DeviceLike, check_type, index_for
from ._lazy import LazyState, state
from ._random import BackendRandom

# Names of the API that start with an underscore (torch.cuda.memory's).
UNDERSCORE_API = ("_record_memory_history", "_snapshot", "_dump_snapshot")
# What a published module holds besides the API: the hooks and lazy state
# (tests and tools reach the hooks directly).
MODULE_INTERNALS = ("_hooks", "_lazy")
# Methods of the surface that are not API.
NOT_API = ("api_names", "exports", "random_exports")


class StreamGetter(Protocol):
    """current_stream / default_stream: the stream object of `device`."""

    def __call__(self, device: DeviceLike = None) -> _C.Stream: ...


class MemoryStatsGetter(Protocol):
    """memory_stats: the allocator statistics of `device`."""

    def __call__(self, device: DeviceLike = None) -> Dict[str, int]: ...


class BackendDevice:
    """Context manager: `device` is current inside the block, the previous one
    after it (also when the block raises). None or -1 changes nothing."""

    _surface: ClassVar[Backend]

    def __init__(self, device: DeviceLike) -> None:
        self.index = self._surface._index(device)
        self.previous = -1

    def __enter__(self) -> BackendDevice:
        if self.index != -1:
            self.previous = self._surface._hooks.exchange_device(self.index)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.index != -1:
            self._surface._hooks.set_device(self.previous)


class BackendStream(_C.Stream):
    """A stream of this backend: Stream(device=None, priority=0) takes a new
    one from the backend's pool (priority as in torch: 0 is the default and
    lowest, lower numbers run first, clamped to priority_range()).
    `with s:` makes it current."""

    _surface: ClassVar[Backend]

    def __init__(self, device: DeviceLike = None, priority: int = 0, *,
                 stream_id: Optional[int] = None) -> None:
        surface = self._surface
        check_type(priority, int, "priority",
                   f"accel.{surface.device_type}.Stream(device=None, priority=0)")
        surface._lazy.lazy_init()
        index = surface._index(device)
        if index == -1:
            index = surface._hooks.current_device()
        if stream_id is not None:
            super().__init__(stream_id, index, _C._device_type_code(surface.device_type))
            return
        super().__init__(_C.Device(surface.device_type, index), priority)

    def record_event(self, event: Optional[_C.Event] = None) -> _C.Event:
        """Records `event` (a new Event of this backend if None) on this
        stream and returns it."""
        if event is None:
            event = self._surface.Event()
        self._surface._own("Stream.record_event", event, _C.Event, "Event")
        event.record(self)
        return event


class BackendEvent(_C.Event):
    """An event of this backend (created on its first record)."""

    _surface: ClassVar[Backend]

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        surface = self._surface
        signature = (f"accel.{surface.device_type}.Event(enable_timing=False, blocking=False, "
                     "interprocess=False)")
        for name, flag in (("enable_timing", enable_timing), ("blocking", blocking),
                           ("interprocess", interprocess)):
            check_type(flag, (bool, int), name, signature)
        surface._lazy.lazy_init()
        # The backend decides: NotSupportedError where its events cannot
        # be shared, InvalidArgumentError with enable_timing on cuda.
        super().__init__(surface.device_type, enable_timing, blocking, interprocess)


class BackendStreamContext:
    """Context manager over a stream, or nothing for None (torch.cuda.stream)."""

    _surface: ClassVar[Backend]

    def __init__(self, s: Optional[_C.Stream]) -> None:
        if s is not None:
            self._surface._own("stream", s, _C.Stream, "Stream")
        self.s = s

    def __enter__(self) -> Optional[_C.Stream]:
        if self.s is not None:
            self.s.__enter__()
        return self.s

    def __exit__(self, *exc: object) -> None:
        if self.s is not None:
            self.s.__exit__(*exc)


class BackendGraph(_C.Graph):
    """A captured sequence of work, replayed with replay()."""

    _surface: ClassVar[Backend]

    def __init__(self, keep_graph: bool = False) -> None:
        self._surface._lazy.lazy_init()
        super().__init__(self._surface.device_type, keep_graph)


class BackendGraphContext:
    """Context manager that captures the block's work on the current stream
    (or `stream`) into `g`."""

    _surface: ClassVar[Backend]

    def __init__(self, g: _C.Graph, pool: Optional[Tuple[int, int]] = None,
                 stream: Optional[_C.Stream] = None,
                 capture_error_mode: str = "global") -> None:
        self.g = g
        self.pool = pool
        self.s = stream
        self.mode = capture_error_mode

    def __enter__(self) -> _C.Graph:
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


class Backend(BackendRandom):
    """The torch.cuda-shaped API of backend `type_name`: its public methods
    and the attributes annotated below are the API (a subclass adds a
    backend's extras); exports() lists them for the module that publishes
    the surface."""

    device_type: str
    # Argument-free pybind11 functions bound to the type (Hooks.probes).
    is_available: Callable[[], bool]
    is_built: Callable[[], bool]
    device_count: Callable[[], int]
    current_device: Callable[[], int]
    capabilities: Callable[[], List[str]]
    # The backend's classes: subclasses of the Backend* classes above, one
    # per surface, named as the API names them.
    device: Type[BackendDevice]
    Stream: Type[BackendStream]
    Event: Type[BackendEvent]
    stream: Type[BackendStreamContext]
    Graph: Type[BackendGraph]
    graph: Type[BackendGraphContext]
    # Cached stream objects of this backend's Stream class, and its memory
    # statistics: one C++ call each (accel._C).
    current_stream: StreamGetter
    default_stream: StreamGetter
    memory_stats: MemoryStatsGetter

    def __init__(self, type_name: str, module_name: Optional[str] = None) -> None:
        super().__init__(type_name)
        self.device_type = type_name
        self._hooks = _C.Hooks(type_name)
        self._lazy: LazyState = state(type_name)
        self.module_name = module_name or f"accel.backend.{type_name}"
        probes = self._hooks.probes()
        self.is_available = probes["is_available"]
        self.is_built = probes["is_built"]
        self.device_count = probes["device_count"]
        self.current_device = probes["current_device"]
        self.capabilities = self._hooks.capabilities
        self.device = self._bound(BackendDevice, "device")
        self.Stream = self._bound(BackendStream, "Stream")
        self.Event = self._bound(BackendEvent, "Event")
        self.stream = self._bound(BackendStreamContext, "stream")
        self.Graph = self._bound(BackendGraph, "Graph")
        self.graph = self._bound(BackendGraphContext, "graph")
        # The binding's functions take `device=None`, which a Callable type
        # cannot say: the Protocols above do.
        functions = _C._stream_functions(type_name, self.Stream)
        self.current_stream = cast(StreamGetter, functions["current_stream"])
        self.default_stream = cast(StreamGetter, functions["default_stream"])
        # memoryStats as a dict with torch's flattened keys
        # ("allocated_bytes.all.current", ...), sorted; {} before the
        # backend is initialised (which it does not initialise).
        self.memory_stats = cast(MemoryStatsGetter, _C._memory_stats_function(type_name))

    def _bound(self, base: Any, name: str) -> Any:
        """`base` for this surface: a subclass named `name` in its module."""
        return type(name, (base,), {"_surface": self, "__module__": self.module_name,
                                    "__qualname__": name, "__doc__": base.__doc__})

    @classmethod
    def api_names(cls) -> List[str]:
        """The names of the API, in declaration order: public methods and
        annotated attributes of the class and its bases, and UNDERSCORE_API."""
        names: List[str] = []
        for klass in reversed(cls.__mro__):
            if klass is object:
                continue
            declared = list(vars(klass).get("__annotations__", {})) + list(vars(klass))
            for name in declared:
                public = not name.startswith("_") or name in UNDERSCORE_API
                member = getattr(cls, name, None)
                if public and name not in names and name not in NOT_API \
                        and (member is None or callable(member)):
                    names.append(name)
        return names

    def exports(self) -> Dict[str, Any]:
        """What the module publishing this surface holds, by name: the API
        and MODULE_INTERNALS."""
        return {name: getattr(self, name) for name in self.api_names() + list(MODULE_INTERNALS)}

    # ---- helpers (not API) ----
    def _index(self, device: DeviceLike) -> int:
        return index_for(self.device_type, device)

    def _own(self, what: str, obj: object,
             kind: Union[Type[_C.Stream], Type[_C.Event]], kind_name: str) -> None:
        # A per-backend module acts on its own backend only: another's stream
        # or event would change or wait on that backend behind its name.
        type_name = self.device_type
        if not isinstance(obj, kind):
            raise TypeError(f"{what} expects an accel.{kind_name} of '{type_name}' "
                            f"(accel.{type_name}.{kind_name}), got {type(obj).__name__}")
        owner = cast(Union[_C.Stream, _C.Event], obj).device_type
        if owner != type_name:
            raise _C.InvalidArgumentError(
                f"{what} expects an accel.{kind_name} of '{type_name}' "
                f"(accel.{type_name}.{kind_name}), got one of '{owner}' "
                f"({obj!r}); use accel.{owner} or accel.set_stream for it")

    def _initialized_index(self, device: DeviceLike, what: str) -> Optional[int]:
        # The index for a memory call that has nothing to do before
        # initialisation (torch's rule for the reset_* functions): None then,
        # after the checks the call would make, none of which initialises.
        index = self._index(device)
        if self._lazy.is_initialized():
            return index
        count = self._hooks.device_count()
        if count == 0:
            # No device (or no backend): initialising fails and says why
            # (NotAvailableError), as the call always did.
            self._lazy.lazy_init()
            return index
        if not self._hooks.supports("memory"):
            return index  # the hook raises NotSupportedError naming the backend
        if index < -1 or index >= count:
            raise _C.InvalidArgumentError(
                f"{what}: device index {index} out of range [0, {count}) for "
                f"'{self.device_type}'")
        return None

    # ---- devices ----
    def init(self) -> None:
        """Initialises the backend now (otherwise the first call that needs it does)."""
        self._lazy.lazy_init()

    def is_initialized(self) -> bool:
        """True once the backend is initialised in this process. Never initialises."""
        return self._lazy.is_initialized()

    def set_device(self, device: DeviceLike) -> None:
        """Makes `device` this thread's current device. Bad index: InvalidArgumentError."""
        self._hooks.set_device(self._index(device))

    def fill_uniform(self, buffer: _C.Buffer, low: float = 0.0, high: float = 1.0, *,
                     dtype: str = "float32", generator: Optional[_C.Generator] = None,
                     stream: Optional[_C.Stream] = None) -> None:
        """Enqueues a uniform fill of a device buffer of this backend (float32 or
        float64 elements) on `stream` (default: the buffer device's current
        stream), from `generator` (default: that device's default generator):
        the host fill's numbers for the same (seed, offset) (accel._C.fill_uniform,
        the one fill of every backend). A buffer of another device raises
        InvalidArgumentError; a backend without the fill group, NotSupportedError."""
        self._lazy.lazy_init()
        _C.fill_uniform(self._own_buffer(buffer, "fill_uniform"), low, high, dtype=dtype,
                        generator=generator, stream=stream)

    def fill_normal(self, buffer: _C.Buffer, mean: float = 0.0, std: float = 1.0, *,
                    dtype: str = "float32", generator: Optional[_C.Generator] = None,
                    stream: Optional[_C.Stream] = None) -> None:
        """Like fill_uniform, normal(mean, std)."""
        self._lazy.lazy_init()
        _C.fill_normal(self._own_buffer(buffer, "fill_normal"), mean, std, dtype=dtype,
                       generator=generator, stream=stream)

    def _own_buffer(self, buffer: _C.Buffer, what: str) -> _C.Buffer:
        device = buffer.device
        if device.type != self.device_type:
            raise _C.InvalidArgumentError(
                f"{what}: the buffer is on {device}, not an {self.device_type} device; "
                f"allocate it with accel.empty(n, device='{self.device_type}:0')")
        return buffer

    def synchronize(self, device: DeviceLike = None) -> None:
        """Waits for all work on `device` (default: current). Releases the GIL."""
        self._lazy.lazy_init()
        self._hooks.synchronize(self._index(device))

    def get_device_properties(self, device: DeviceLike = None) -> _C.DeviceProperties:
        """Typed properties of `device` (default: current)."""
        self._lazy.lazy_init()
        return self._hooks.device_properties(self._index(device))

    def get_device_name(self, device: DeviceLike = None) -> str:
        """The device's name."""
        return str(self.get_device_properties(device).name)

    def get_device_capability(self, device: DeviceLike = None) -> Tuple[int, int]:
        """(major, minor) of the device's architecture version; (0, 0) if none."""
        props = self.get_device_properties(device)
        return int(props.major), int(props.minor)

    # ---- streams ----
    def set_stream(self, stream: _C.Stream) -> None:
        """Makes `stream` current for its device on this thread, and its device
        the current device (torch.accelerator.set_stream does both). A
        non-Stream raises TypeError; a stream of another backend
        InvalidArgumentError (a ValueError)."""
        self._own("set_stream", stream, _C.Stream, "Stream")
        self._lazy.lazy_init()
        self._hooks.set_device(stream.device_index)
        _C._set_stream(stream)

    # ---- memory ----
    def memory_stats_as_nested_dict(self, device: DeviceLike = None) -> Dict[str, Any]:
        """memory_stats() with its dotted keys made nested dicts
        ({"allocated_bytes": {"all": {"current": ...}}}), as torch.cuda's."""
        return _memory_report.nested(self.memory_stats(device))

    def memory_allocated(self, device: DeviceLike = None) -> int:
        """Bytes handed out to callers now."""
        return int(self.memory_stats(device).get("allocated_bytes.all.current", 0))

    def max_memory_allocated(self, device: DeviceLike = None) -> int:
        """Peak of memory_allocated() since the start or the last reset."""
        return int(self.memory_stats(device).get("allocated_bytes.all.peak", 0))

    def memory_reserved(self, device: DeviceLike = None) -> int:
        """Bytes obtained from the device now (>= allocated with caching)."""
        return int(self.memory_stats(device).get("reserved_bytes.all.current", 0))

    def max_memory_reserved(self, device: DeviceLike = None) -> int:
        """Peak of memory_reserved()."""
        return int(self.memory_stats(device).get("reserved_bytes.all.peak", 0))

    def reset_peak_memory_stats(self, device: DeviceLike = None) -> None:
        """Sets the peaks to the current values. Before the backend is
        initialised there are no figures: does nothing, initialises nothing."""
        index = self._initialized_index(device, "reset_peak_memory_stats")
        if index is not None:
            self._hooks.reset_peak_memory_stats(index)

    def empty_cache(self) -> None:
        """Returns cached, unused device memory to the device. Does nothing
        (and does not initialise the backend) before initialisation."""
        if self._lazy.is_initialized():
            self._hooks.empty_cache()

    def reset_accumulated_memory_stats(self, device: DeviceLike = None) -> None:
        """Sets the cumulative figures of memory_stats() ("*.allocated",
        "*.freed") and its event counters ("num_ooms", "num_alloc_retries",
        "num_sync_all_streams", "num_device_alloc", "num_device_free") to 0;
        current values and peaks stay. Before the backend is initialised:
        does nothing, initialises nothing."""
        index = self._initialized_index(device, "reset_accumulated_memory_stats")
        if index is not None:
            self._hooks.reset_accumulated_memory_stats(index)

    def get_memory_info(self, device: DeviceLike = None) -> Tuple[int, int]:
        """(free, total) bytes of `device` (default: current), as
        torch.cuda.mem_get_info: memory the caching allocator holds counts as
        used. Initialises the backend. NotSupportedError where the backend
        cannot tell its capacity."""
        self._lazy.lazy_init()
        free, total = self._hooks.memory_info(self._index(device))
        return int(free), int(total)

    def mem_get_info(self, device: DeviceLike = None) -> Tuple[int, int]:
        """torch.cuda's name for get_memory_info: (free, total) bytes."""
        return self.get_memory_info(device)

    def set_per_process_memory_fraction(self, fraction: float,
                                        device: DeviceLike = None) -> None:
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
        self._lazy.lazy_init()
        self._hooks.set_memory_fraction(float(fraction), self._index(device))

    def memory_summary(self, device: DeviceLike = None, abbreviated: bool = False) -> str:
        """memory_stats(device) as a readable table (torch.cuda.memory_summary):
        current, peak, allocated and freed of each figure, by pool unless
        `abbreviated`. Does not initialise the backend (zeros before)."""
        index = self._index(device)
        count = self._hooks.device_count()
        if index < -1 or index >= count:
            # memory_stats answers {} for any index before initialisation.
            raise _C.InvalidArgumentError(
                f"memory_summary: device index {index} out of range [0, {count}) for "
                f"'{self.device_type}'")
        stats = self.memory_stats(device)
        label = f"{self.device_type}:{index if index >= 0 else self._hooks.current_device()}"
        return _memory_report.summary(stats, label, abbreviated)

    def memory_snapshot(self) -> List[Dict[str, Any]]:
        """The segments of every device (torch.cuda.memory_snapshot():
        _snapshot()["segments"]); [] before the backend is initialised, which
        it does not initialise."""
        if not self._lazy.is_initialized():
            return []
        return list(self._hooks.memory_snapshot(-1, True, False)["segments"])

    def host_memory_stats(self) -> Dict[str, int]:
        """Statistics of the pinned host memory cache under
        torch.cuda.host_memory_stats' keys ("allocations.current",
        "active_bytes.peak", "num_host_alloc", ...; docs/python.md maps
        them); {} before the backend is initialised, which it does not
        initialise."""
        if not self._lazy.is_initialized():
            return {}
        return _memory_report.host_stats(self._hooks.host_memory_stats())

    def _record_memory_history(self, enabled: Union[None, str, bool] = "all",
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
        self._lazy.lazy_init()
        with_stacks = context is not None and enabled is not None
        self._hooks.record_memory_history(enabled, max_entries,
                                          record_stack=with_stacks and stacks == "all",
                                          python_stack=with_stacks)

    def _snapshot(self, device: DeviceLike = None) -> Dict[str, Any]:
        """The allocator state and history in torch.cuda.memory._snapshot()'s form."""
        self._lazy.lazy_init()
        index = self._index(device)
        return dict(self._hooks.memory_snapshot(index, index == -1, True))

    def _dump_snapshot(self, filename: str = "dump_snapshot.pickle") -> None:
        """Pickles _snapshot() to `filename` (PyTorch's memory_viz reads it)."""
        snapshot = self._snapshot()
        with open(filename, "wb") as f:
            pickle.dump(snapshot, f)


# ---- the registry of published surfaces ----
_surfaces: Dict[str, Backend] = {}
_modules: Dict[str, types.ModuleType] = {}
_lock = threading.RLock()


def publish(surface: Backend, namespace: Dict[str, Any]) -> None:
    """Defines `surface`'s API in `namespace` (a backend package's globals)
    and registers that module as the module of the surface's device type.
    Raises InvalidArgumentError when another module holds the type."""
    module = sys.modules[namespace["__name__"]]
    with _lock:
        held = _modules.get(surface.device_type)
        if held is not None and held is not module:
            raise _C.InvalidArgumentError(
                f"the '{surface.device_type}' backend's module is {held.__name__}; "
                f"{module.__name__} cannot publish another")
        namespace.update(surface.exports())
        _surfaces[surface.device_type] = surface
        _modules[surface.device_type] = module


def backend(type_name: str) -> types.ModuleType:
    """The torch.cuda-shaped module of backend `type_name` (any registered or
    built-in type), created on first use: a backend package's when it has
    one (its published module; accel.opencl is imported for it when the
    binding built its native module), else a module of a plain Backend.
    Raises InvalidArgumentError for an unknown type name."""
    with _lock:
        found = _modules.get(type_name)
        if found is not None:
            return found
    package = f"{__name__.rpartition('.')[0]}.{type_name}"
    if f"{package}._native" in sys.modules:
        # Imported by name, not by an import statement: backend packages
        # import this module, never the other way round.
        importlib.import_module(package)
        return _modules[type_name]
    _C.Hooks(type_name)  # unknown names: InvalidArgumentError listing the known ones
    module = types.ModuleType(f"accel.backend.{type_name}",
                              f"The accel API of the '{type_name}' backend.")
    surface = Backend(type_name, module.__name__)
    module.__dict__.update(surface.exports())
    with _lock:
        _surfaces.setdefault(type_name, surface)
        return _modules.setdefault(type_name, module)


def surface(type_name: str) -> Backend:
    """The surface behind backend(type_name): the same API, typed."""
    backend(type_name)
    with _lock:
        return _surfaces[type_name]

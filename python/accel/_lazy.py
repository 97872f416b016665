"""Lazy initialisation per device type, as torch.cuda does it.

Importing accel touches no device. The first call that needs a backend runs
``Context::lazyInitDevice`` (through ``accel._C._lazy_init``) and then the calls
that were queued while the backend was not initialised: ``manual_seed`` before
initialisation is applied at initialisation, so it gives the same numbers as
seeding after.

Thread-safety: every function here is thread-safe (one lock per device type;
the C++ context serialises the initialisation itself).
"""

from __future__ import annotations

import threading
from typing import Callable, Dict, List, Optional

from . import _C


class LazyState:
    """Initialisation state and queued calls of one device type."""

    def __init__(self, type_name: str) -> None:
        self.type = type_name
        self._lock = threading.Lock()
        self._done = False
        self._queued: List[Callable[[], None]] = []
        self._queued_seed: Optional[Callable[[], None]] = None
        self._queued_seed_all: Optional[Callable[[], None]] = None

    def is_initialized(self) -> bool:
        """True once the backend is initialised in this process (never initialises)."""
        return bool(_C._is_initialized(self.type))

    def lazy_init(self) -> None:
        """Initialises the backend if needed, then runs the queued calls.

        Raises what initialisation raises: NotAvailableError when no backend is
        registered, DeviceError in a fork child of a process that had
        initialised it. A failed initialisation is retried by the next call.
        """
        if self._done:
            return
        _C._lazy_init(self.type)
        with self._lock:
            if self._done:
                return
            calls: List[Callable[[], None]] = []
            if self._queued_seed_all is not None:
                calls.append(self._queued_seed_all)
            if self._queued_seed is not None:
                calls.append(self._queued_seed)
            calls.extend(self._queued)
            for call in calls:
                call()
            self._queued.clear()
            self._queued_seed = None
            self._queued_seed_all = None
            self._done = True

    def lazy_call(self, call: Callable[[], None], *, seed: bool = False,
                  seed_all: bool = False) -> None:
        """Runs `call` now if the backend is initialised, else at initialisation.

        A queued seed (or seed_all) replaces the one queued before it, as only
        the last seeding matters; a seed_all also drops a queued seed of the
        current device, which it seeds anew, so that the seeds applied at
        initialisation give what the same calls give after it.
        """
        with self._lock:
            if not self._done and not self.is_initialized():
                if seed_all:
                    self._queued_seed_all = call
                    self._queued_seed = None
                elif seed:
                    self._queued_seed = call
                else:
                    self._queued.append(call)
                return
        self.lazy_init()
        call()


_states: Dict[str, LazyState] = {}
_states_lock = threading.Lock()


def state(type_name: str) -> LazyState:
    """The one LazyState of `type_name`."""
    found = _states.get(type_name)
    if found is not None:
        return found
    with _states_lock:
        return _states.setdefault(type_name, LazyState(type_name))

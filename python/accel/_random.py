"""Random-number functions of one backend (the shape of torch.cuda.random).

BackendRandom is the random part of a backend's surface (accel._backend's
Backend derives from it): each backend module (accel.openreg,
accel.backend("x")) and its random module (accel/openreg/random.py) expose
these methods of the backend's surface as their functions. They reach the device generator through
``accel._C._get_default_generator(type, index)``, which asks
``Context::defaultGenerator``, which asks the backend's hooks.

Thread-safety: all functions are thread-safe (the generator locks itself).
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Union

from . import _C
from ._lazy import LazyState, state
from ._devices import DeviceLike, check_type, index_for


def check_seed(seed: int) -> int:
    """`seed` if it is an int in [-2**63, 2**64), else InvalidArgumentError.

    Checked at the call, not when a queued seed is applied at initialisation.
    """
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise _C.InvalidArgumentError(f"a seed must be an int, not {type(seed).__name__}")
    if not -(2**63) <= seed < 2**64:
        raise _C.InvalidArgumentError(f"seed {seed} is out of range: use an int in [-2**63, 2**64)")
    return seed


class BackendRandom:
    """The random functions of device type `type_name`."""

    def __init__(self, type_name: str) -> None:
        self.type = type_name
        self._state: LazyState = state(type_name)
        self._hooks = _C.Hooks(type_name)

    def default_generator(self, device: DeviceLike = None) -> _C.Generator:
        """The default generator of `device` (default: the current device)."""
        self._state.lazy_init()
        return _C._get_default_generator(self.type, index_for(self.type, device))

    def manual_seed(self, seed: int) -> None:
        """Seeds the current device's default generator.

        Before the backend is initialised the seed is queued and applied at
        initialisation (on the device current then), as torch.cuda does.
        """
        seed_value = check_seed(seed)

        def apply() -> None:
            index = self._hooks.current_device()
            _C._get_default_generator(self.type, index).manual_seed(seed_value)

        self._state.lazy_call(apply, seed=True)

    def manual_seed_all(self, seed: int) -> None:
        """Seeds the default generator of every device of this backend."""
        seed_value = check_seed(seed)

        def apply() -> None:
            for index in range(self._hooks.device_count()):
                _C._get_default_generator(self.type, index).manual_seed(seed_value)

        self._state.lazy_call(apply, seed_all=True)

    def seed(self) -> None:
        """Seeds the current device's generator from a non-deterministic source."""
        def apply() -> None:
            _C._get_default_generator(self.type, self._hooks.current_device()).seed()

        self._state.lazy_call(apply, seed=True)

    def seed_all(self) -> None:
        """Seeds every device from one non-deterministic seed."""

        def apply() -> None:
            value = _C._get_default_generator(self.type, 0).seed()
            for index in range(1, self._hooks.device_count()):
                _C._get_default_generator(self.type, index).manual_seed(value)

        self._state.lazy_call(apply, seed_all=True)

    def initial_seed(self) -> int:
        """The seed the current device's generator was last seeded with."""
        return int(self.default_generator().initial_seed())

    def get_rng_state(self, device: DeviceLike = None) -> bytes:
        """The state of `device`'s default generator as bytes (docs/random.md)."""
        return bytes(self.default_generator(device).get_state())

    def set_rng_state(self, new_state: Union[bytes, bytearray, memoryview],
                      device: DeviceLike = None) -> None:
        """Restores a state from get_rng_state(); a wrong-size blob raises
        InvalidArgumentError and changes nothing."""
        check_type(new_state, (bytes, bytearray, memoryview), "new_state",
                   f"accel.{self.type}.set_rng_state(new_state, device=None)")
        self.default_generator(device).set_state(new_state)

    def get_rng_state_all(self) -> List[bytes]:
        """get_rng_state() of every device, in index order."""
        self._state.lazy_init()
        return [self.get_rng_state(i) for i in range(self._hooks.device_count())]

    def set_rng_state_all(self, new_states: Iterable[Union[bytes, bytearray]]) -> None:
        """set_rng_state(new_states[i], i) for each device i."""
        for index, blob in enumerate(new_states):
            self.set_rng_state(blob, index)

    def random_exports(self) -> Dict[str, Any]:
        """The random functions, by name (what accel/<type>/random.py holds)."""
        return {
            "default_generator": self.default_generator,
            "manual_seed": self.manual_seed,
            "manual_seed_all": self.manual_seed_all,
            "seed": self.seed,
            "seed_all": self.seed_all,
            "initial_seed": self.initial_seed,
            "get_rng_state": self.get_rng_state,
            "set_rng_state": self.set_rng_state,
            "get_rng_state_all": self.get_rng_state_all,
            "set_rng_state_all": self.set_rng_state_all,
        }


__all__ = ["BackendRandom", "check_seed"]

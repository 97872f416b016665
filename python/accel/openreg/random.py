"""Random numbers of openreg devices: accel.openreg.manual_seed and friends.

Layer two of the seeds' flow (docs/python.md): ``accel.openreg.manual_seed(42)``
is ``RANDOM.manual_seed`` below, which finds the current device and calls
``accel._C._get_default_generator("openreg", index)`` (layer three), which
calls ``Context::defaultGenerator`` (four), which calls the openreg hooks'
``getDefaultGenerator`` (five), which returns the device's Philox generator
(six). Before openreg is initialised the seed is queued and applied at
initialisation.
"""

from __future__ import annotations

from .._random import BackendRandom

RANDOM = BackendRandom("openreg")

default_generator = RANDOM.default_generator
manual_seed = RANDOM.manual_seed
manual_seed_all = RANDOM.manual_seed_all
seed = RANDOM.seed
seed_all = RANDOM.seed_all
initial_seed = RANDOM.initial_seed
get_rng_state = RANDOM.get_rng_state
set_rng_state = RANDOM.set_rng_state
get_rng_state_all = RANDOM.get_rng_state_all
set_rng_state_all = RANDOM.set_rng_state_all

__all__ = ["default_generator", "manual_seed", "manual_seed_all", "seed", "seed_all",
           "initial_seed", "get_rng_state", "set_rng_state", "get_rng_state_all",
           "set_rng_state_all"]

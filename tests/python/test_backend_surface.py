"""A backend's Python surface is a class whose methods are its API
(accel._backend.Backend, a subclass for a backend's extras), published by the
backend's package: the package's functions are the surface's bound methods,
and one module holds each device type."""

import sys
import types

import pytest

import accel
from accel import _backend
from accel.openreg._surface import OpenReg


def test_the_package_functions_are_the_surfaces_bound_methods() -> None:
    surface = _backend.surface("openreg")
    assert isinstance(surface, OpenReg)
    assert accel.openreg.synchronize == surface.synchronize  # a bound method of it
    assert accel.openreg.fill_uniform == surface.fill_uniform  # every backend's fill
    assert accel.openreg.random.manual_seed == surface.manual_seed
    assert accel.openreg.Stream is surface.Stream
    assert accel.openreg.Stream.__module__ == "accel.openreg"


def test_the_api_is_every_backends_plus_the_subclass_extras() -> None:
    every = _backend.Backend.api_names()
    assert {"synchronize", "Stream", "current_stream", "manual_seed", "is_available",
            "_record_memory_history"} <= set(every)
    assert not {"_index", "_own", "exports", "api_names"} & set(every)
    extras = [n for n in OpenReg.api_names() if n not in every]
    assert "fill_uniform" in every and "fail_nth_allocation" in extras
    assert set(every) <= set(vars(accel.cuda)) and set(OpenReg.api_names()) <= set(
        vars(accel.openreg))


def test_a_second_module_cannot_publish_a_type_another_module_holds() -> None:
    intruder = types.ModuleType("intruder")
    sys.modules["intruder"] = intruder
    try:
        with pytest.raises(accel.InvalidArgumentError, match="accel.openreg"):
            _backend.publish(_backend.surface("openreg"), intruder.__dict__)
    finally:
        del sys.modules["intruder"]
    assert "synchronize" not in vars(intruder)  # refused before anything was defined
    assert accel.backend("openreg") is accel.openreg


def test_a_type_without_a_package_gets_a_module_of_a_plain_backend() -> None:
    module = accel.backend("hip")  # a built-in type: registered or not, it has a module
    assert module.__name__ == "accel.backend.hip"
    assert type(_backend.surface("hip")) is _backend.Backend
    assert module.synchronize == _backend.surface("hip").synchronize

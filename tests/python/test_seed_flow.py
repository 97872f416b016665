"""The seeds' six layers, each on its own, and device fill == host fill."""

from typing import Any

import numpy as np
import pytest

from conftest import RunPython
import accel
from accel import _C
import accel.openreg.random as openreg_random


def test_layer1_user_call_seeds_the_current_device() -> None:
    accel.openreg.manual_seed(42)
    assert accel.openreg.initial_seed() == 42
    assert accel.openreg.default_generator().get_offset() == 0


def test_layer2_python_api_is_openreg_random_and_asks_the_binding(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert accel.openreg.manual_seed == openreg_random.manual_seed
    calls = []
    real = _C._get_default_generator

    def spy(type_name: str, index: int = -1) -> accel.Generator:
        calls.append((type_name, index))
        return real(type_name, index)

    accel.openreg.init()
    monkeypatch.setattr(_C, "_get_default_generator", spy)
    with accel.openreg.device(1):
        accel.openreg.manual_seed(7)
    assert calls == [("openreg", 1)]
    assert real("openreg", 1).initial_seed() == 7


def test_layer3_binding_returns_the_device_generator() -> None:
    generator = _C._get_default_generator("openreg", 1)
    assert generator.device == accel.Device("openreg:1")
    generator.manual_seed(11)
    assert _C._get_default_generator("openreg", 1).initial_seed() == 11
    with pytest.raises(accel.InvalidArgumentError, match="out of range"):
        _C._get_default_generator("openreg", 5)


def test_layer4_context_gives_the_hooks_generator_after_init() -> None:
    from_context = _C._get_default_generator("openreg", 0)
    assert _C._is_initialized("openreg")
    from_hooks = _C.Hooks("openreg").default_generator(0)
    assert from_context == from_hooks


def test_layer5_hooks_return_one_generator_per_device() -> None:
    hooks = _C.Hooks("openreg")
    assert hooks.default_generator(0) == hooks.default_generator(0)
    assert hooks.default_generator(0) != hooks.default_generator(1)
    assert hooks.new_generator(0) != hooks.default_generator(0)


@pytest.mark.parametrize("dtype,numpy_type", [("float32", np.float32), ("float64", np.float64)])
@pytest.mark.parametrize("offset", [0, 12, 1001])
def test_layer6_device_fill_equals_host_fill(dtype: str, numpy_type: Any, offset: int) -> None:
    count = 1000
    itemsize = np.dtype(numpy_type).itemsize
    generator = accel.openreg.default_generator(0)
    generator.manual_seed(42)
    generator.set_offset(offset)
    device_buffer = accel.empty(count * itemsize, device="openreg:0")
    accel.openreg.fill_uniform(device_buffer, dtype=dtype)
    device_values = np.frombuffer(device_buffer.tobytes(), dtype=numpy_type)

    host_values = np.empty(count, dtype=numpy_type)
    _C._host_fill_uniform(host_values, 42, offset, 0.0, 1.0, dtype)
    assert np.array_equal(device_values, host_values)
    assert 0.0 <= host_values.min() and host_values.max() < 1.0
    assert len(set(host_values.tolist())) > count // 2


def test_device_normal_fill_equals_host_fill() -> None:
    generator = accel.openreg.default_generator(1)
    generator.manual_seed(42)
    buffer = accel.empty(4 * 256, device="openreg:1")
    accel.openreg.fill_normal(buffer, 1.0, 2.0, generator=generator)
    host = np.empty(256, dtype=np.float32)
    _C._host_fill_normal(host, 42, 0, 1.0, 2.0)
    assert np.array_equal(np.frombuffer(buffer.tobytes(), dtype=np.float32), host)


def test_rng_state_round_trip_reproduces_numbers() -> None:
    accel.openreg.manual_seed(3)
    state = accel.openreg.get_rng_state()
    assert isinstance(state, bytes)
    first = accel.empty(4 * 64, device="openreg:0")
    accel.openreg.fill_uniform(first)
    accel.openreg.set_rng_state(state)
    second = accel.empty(4 * 64, device="openreg:0")
    accel.openreg.fill_uniform(second)
    assert first.tobytes() == second.tobytes()
    third = accel.empty(4 * 64, device="openreg:0")
    accel.openreg.fill_uniform(third)
    assert third.tobytes() != second.tobytes()


def test_rng_state_all_and_seed_all() -> None:
    accel.openreg.manual_seed_all(5)
    states = accel.openreg.get_rng_state_all()
    assert len(states) == accel.openreg.device_count()
    assert [accel.openreg.default_generator(i).initial_seed() for i in range(2)] == [5, 5]
    accel.openreg.seed_all()
    accel.openreg.set_rng_state_all(states)
    assert accel.openreg.default_generator(1).initial_seed() == 5


def test_wrong_size_state_blob_is_a_clear_error() -> None:
    before = accel.openreg.get_rng_state()
    with pytest.raises(accel.InvalidArgumentError) as info:
        accel.openreg.set_rng_state(before[:-1])
    assert "size" in str(info.value) or "bytes" in str(info.value)
    assert accel.openreg.get_rng_state() == before


def test_manual_seed_before_init_is_applied_at_init(run_python: RunPython) -> None:
    code = """
        import accel, numpy as np
        assert not accel.openreg.is_initialized()
        accel.openreg.manual_seed(42)
        assert not accel.openreg.is_initialized(), "manual_seed must not initialise"
        buf = accel.empty(4 * 100, device="openreg:0")   # initialises; seed applied
        accel.openreg.fill_uniform(buf)
        early = buf.tobytes()
        accel.openreg.manual_seed(42)                   # seeding after init
        accel.openreg.fill_uniform(buf)
        assert buf.tobytes() == early
        host = np.empty(100, dtype=np.float32)
        accel._C._host_fill_uniform(host, 42, 0)
        assert host.tobytes() == early
        print("ok")
    """
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_bad_seeds_are_rejected_at_the_call() -> None:
    with pytest.raises(accel.InvalidArgumentError):
        accel.openreg.manual_seed(2**64)
    with pytest.raises(accel.InvalidArgumentError):
        accel.openreg.manual_seed("42")  # type: ignore[arg-type]
    accel.openreg.manual_seed(-1)
    assert accel.openreg.initial_seed() == 2**64 - 1


def test_device_agnostic_manual_seed_seeds_every_device() -> None:
    accel.manual_seed(99)
    assert [accel.openreg.default_generator(i).initial_seed() for i in range(2)] == [99, 99]

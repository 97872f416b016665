"""Device, Generator, errors and bad input."""

import pickle

import pytest
from hypothesis import given, settings, strategies as st

import accel
from accel import _C


def test_device_parse_repr_equality_hash() -> None:
    d = accel.Device("openreg:1")
    assert (d.type, d.index) == ("openreg", 1)
    assert str(d) == "openreg:1"
    assert repr(d) == "accel.Device('openreg:1')"
    assert d == accel.Device("openreg", 1)
    assert d != accel.Device("openreg:0") and d != "openreg:1"
    assert hash(d) == hash(accel.Device("openreg", 1))
    assert len({d, accel.Device("openreg:1"), accel.Device("openreg")}) == 2
    assert accel.Device("openreg").index is None
    assert pickle.loads(pickle.dumps(d)) == d


@pytest.mark.parametrize("text", ["cuda:abc", "cuda:", ":1", "CUDA:0", "openreg:1:2", "", "nosuchtype:0", "cuda:-2"])
def test_bad_device_text_is_invalid_argument(text: str) -> None:
    with pytest.raises(accel.InvalidArgumentError) as info:
        accel.Device(text)
    assert isinstance(info.value, ValueError)
    assert str(info.value)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["cpu", "cuda", "openreg", "hip", "xpu"]), st.integers(min_value=0, max_value=127))
def test_device_text_round_trips(type_name: str, index: int) -> None:
    d = accel.Device(f"{type_name}:{index}")
    assert (d.type, d.index) == (type_name, index)
    assert accel.Device(str(d)) == d


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12))
def test_arbitrary_device_text_parses_or_raises_invalid_argument(text: str) -> None:
    try:
        d = accel.Device(text)
    except accel.InvalidArgumentError:
        return
    assert accel.Device(str(d)) == d


def test_error_hierarchy() -> None:
    assert issubclass(accel.Error, RuntimeError)
    assert issubclass(accel.InvalidArgumentError, accel.Error)
    assert issubclass(accel.InvalidArgumentError, ValueError)
    assert issubclass(accel.NotSupportedError, NotImplementedError)
    assert issubclass(accel.NotAvailableError, accel.Error)
    assert issubclass(accel.OutOfMemoryError, MemoryError)
    assert issubclass(accel.DeviceError, accel.Error)
    assert accel.Error.__module__ == "accel"


def test_out_of_range_device_index_carries_the_cpp_message() -> None:
    with pytest.raises(accel.InvalidArgumentError, match=r"device index 5 out of range \[0, 2\) for 'openreg'"):
        accel.openreg.set_device(5)
    with pytest.raises(accel.InvalidArgumentError, match="out of range"):
        accel.openreg.set_device(300)
    assert accel.openreg.current_device() == 0


def test_out_of_memory_maps_to_out_of_memory_error() -> None:
    accel.openreg.fail_nth_allocation(1)
    with pytest.raises(accel.OutOfMemoryError):
        accel.empty(4096, device="openreg:0")
    accel.empty(4096, device="openreg:0")


def test_lost_device_maps_to_device_error() -> None:
    pass_buffer = accel.empty(4096, device="openreg:1")
    accel.openreg.lose_device_after(1, 0)
    try:
        with pytest.raises(accel.DeviceError):
            pass_buffer.copy_(bytes(4096))
        assert accel.openreg.is_device_lost(1)
    finally:
        accel.openreg.clear_faults()


def test_absent_backend_raises_not_available_and_probes_answer() -> None:
    assert accel.cuda.is_available() in (True, False)
    if _C.Hooks("cuda").is_registered:
        pytest.skip("a CUDA backend is registered")
    assert accel.cuda.device_count() == 0
    assert accel.cuda.is_available() is False
    with pytest.raises(accel.NotAvailableError) as info:
        accel.cuda.synchronize()
    assert "cuda" in str(info.value)


def test_undeclared_group_raises_not_supported_naming_backend_and_group() -> None:
    if "memory_history" in accel.openreg.capabilities():
        pytest.skip("openreg declares memory_history now")
    with pytest.raises(accel.NotSupportedError) as info:
        accel.openreg._snapshot()
    message = str(info.value)
    assert "openreg" in message and "memory_history" in message


def test_generator_object() -> None:
    g = accel.openreg.default_generator(0).clone()
    g.manual_seed(8)
    g.set_offset(40)
    assert (g.initial_seed(), g.offset) == (8, 40)
    state = g.get_state()
    other = g.clone()
    other.manual_seed(1)
    other.set_state(state)
    assert other.get_state() == state and other is not g and other != g
    assert g.engine
    assert g.device == accel.Device("openreg:0")


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=2**64 - 1), st.integers(min_value=0, max_value=2**60))
def test_generator_state_round_trips(seed: int, offset: int) -> None:
    g = accel.openreg.default_generator(0).clone()
    g.manual_seed(seed)
    g.set_offset(offset)
    blob = g.get_state()
    h = g.clone()
    h.seed()
    h.set_state(blob)
    assert (h.initial_seed(), h.get_offset(), h.get_state()) == (seed, offset, blob)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=64))
def test_random_state_blobs_never_crash(blob: bytes) -> None:
    g = accel.openreg.default_generator(0).clone()
    before = g.get_state()
    try:
        g.set_state(blob)
    except accel.InvalidArgumentError:
        assert g.get_state() == before


def test_device_properties_are_typed() -> None:
    props = accel.openreg.get_device_properties(1)
    assert isinstance(props, accel.DeviceProperties)
    assert isinstance(props.name, str) and props.total_memory > 0
    assert accel.openreg.get_device_name(0) == props.name

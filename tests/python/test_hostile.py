"""Hostile input to the Python API (wrong types, out-of-range values, objects
used after they are gone) gets the documented Python error, never an abort of
the interpreter or an error that names C++ or pybind11; each case is one
such input that once did."""

import pickle
import re
from typing import Callable, Dict

from conftest import RunPython
import accel
import pytest


def _objects() -> Dict[str, object]:
    o = accel.openreg
    return {
        "Event": o.Event(),
        "Generator": accel.Generator("openreg:0"),
        "device Buffer": accel.empty(8, device="openreg:0"),
        "host Buffer": accel.empty(8),
        "Graph": o.Graph(),
        "DeviceProperties": o.get_device_properties(0),
        "Hooks": o._hooks,
    }


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickling_live_objects_is_a_type_error_under_every_protocol(protocol: int) -> None:
    for name, obj in _objects().items():
        with pytest.raises(TypeError, match="cannot pickle"):
            pickle.dumps(obj, protocol)
        with pytest.raises(TypeError, match="cannot pickle"):
            obj.__reduce__()


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_streams_and_devices_pickle_by_value_under_every_protocol(protocol: int) -> None:
    s = accel.openreg.Stream(1)
    assert pickle.loads(pickle.dumps(s, protocol)) == s
    d = accel.Device("openreg:1")
    assert pickle.loads(pickle.dumps(d, protocol)) == d


def test_pickling_in_a_fresh_interpreter_with_protocol_0_does_not_abort(
        run_python: RunPython) -> None:
    result = run_python("""
        import pickle, accel
        for obj in (accel.openreg.Event(), accel.empty(4, device="openreg:0")):
            try:
                pickle.dumps(obj, 0)
            except TypeError:
                pass
        print("alive")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "alive"


LONE_SURROGATE = "\udcff"


def test_lone_surrogate_device_text_is_an_invalid_argument_error() -> None:
    with pytest.raises(accel.InvalidArgumentError, match="lone surrogate"):
        accel.Device(LONE_SURROGATE)
    with pytest.raises(accel.InvalidArgumentError, match="lone surrogate"):
        accel.empty(4, device=LONE_SURROGATE)
    with pytest.raises(accel.InvalidArgumentError, match="lone surrogate"):
        accel.set_device_index("openreg:" + LONE_SURROGATE)
    with pytest.raises(accel.InvalidArgumentError, match="lone surrogate"):
        accel.Stream(LONE_SURROGATE)
    with pytest.raises(accel.InvalidArgumentError, match="lone surrogate"):
        accel.backend(LONE_SURROGATE)
    with pytest.raises(accel.InvalidArgumentError, match="lone surrogate"):
        accel.set_current_accelerator(LONE_SURROGATE)


def test_set_stream_with_a_non_stream_is_a_type_error() -> None:
    for bad in ("", None, 0, accel.Device("openreg:0")):
        with pytest.raises(TypeError, match="set_stream expects an accel.Stream"):
            accel.set_stream(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="set_stream expects an accel.Stream"):
            accel.openreg.set_stream(bad)  # type: ignore[arg-type]


def test_unregistered_backend_names_say_so_and_list_the_registered_ones() -> None:
    for call in (accel.backend, accel.set_current_accelerator):
        with pytest.raises(accel.InvalidArgumentError) as info:
            call("nosuchdev")
        message = str(info.value)
        assert "'nosuchdev'" in message
        assert "registered backends: openreg" in message
        assert "accel.load_backend(path)" in message


def test_non_str_backend_names_are_type_errors() -> None:
    with pytest.raises(TypeError):
        accel.set_current_accelerator(3)  # type: ignore[arg-type]


def test_numpy_asarray_of_a_device_buffer_raises_a_clear_error() -> None:
    np = pytest.importorskip("numpy")
    buf = accel.empty(16, device="openreg:0")
    with pytest.raises(BufferError, match="copy it to the host first"):
        np.asarray(buf)
    host = accel.empty(16)
    view = np.asarray(host)
    assert view.dtype == np.uint8 and view.shape == (16,)
    assert view.ctypes.data == host.data_ptr()


def test_messages_carry_no_cpp_source_location() -> None:
    with pytest.raises(accel.OutOfMemoryError) as info:
        accel.empty(1 << 50, device="openreg:0")
    assert ".cpp:" not in str(info.value)
    assert "out of memory" in str(info.value)


def test_exit_with_a_daemon_thread_inside_a_gil_releasing_call_is_clean(
        run_python: RunPython) -> None:
    # 180 of 300 runs aborted ("terminate called without an active
    # exception"): CPython 3.11 pthread_exits a thread that takes the GIL back
    # during finalisation, an unwind through the GIL guard's destructor.
    code = """
        import threading, accel
        s = accel.openreg.Stream(0)
        accel.openreg.set_stream_latency(s, 2000.0)
        def spin():
            while True:
                accel.empty(64, device="openreg:0").copy_(bytes(64))
                s.synchronize()
        for _ in range(3):
            threading.Thread(target=spin, daemon=True).start()
        import time; time.sleep(0.02)
    """
    for _ in range(12):
        result = run_python(code, timeout=60)
        assert result.returncode == 0, result.stderr
        assert "terminate" not in result.stderr


@pytest.mark.parametrize("call, argument, accepted", [
    (lambda: accel.openreg.set_device(2**70), "device index", r"\[-1, 127\]"),
    (lambda: accel.openreg.synchronize(-2**70), "device index", r"\[-1, 127\]"),
    (lambda: accel.openreg.set_device(300), "device index", r"\[-1, 127\]"),
    (lambda: accel.openreg.get_device_properties(2**64), "device index", r"\[-1, 127\]"),
    (lambda: accel.empty(2**70), "nbytes", r"\[-9223372036854775808, 9223372036854775807\]"),
    (lambda: accel.openreg.fail_nth_allocation(-1), "nth", r"\[0, 18446744073709551615\]"),
    (lambda: accel.openreg.fail_nth_allocation(2**64), "nth", r"\[0, 18446744073709551615\]"),
    (lambda: accel.openreg.Stream(0, priority=2**40), "priority", r"\[-2147483648, 2147483647\]"),
    (lambda: accel.openreg.set_execution_units(0, 2**40), "units", r"\[-2147483648, 2147483647\]"),
    (lambda: accel.Stream(2**70, 0, 0), "stream_id", r"\["),
])
def test_an_int_out_of_range_names_the_argument_and_the_range(
        call: Callable[[], object], argument: str,
                                                              accepted: str) -> None:
    with pytest.raises(accel.InvalidArgumentError) as error:
        call()
    message = str(error.value)
    assert "incompatible function arguments" not in message
    assert argument in message and "out of range" in message, message
    assert re.search(accepted, message), message


def test_seeds_take_torchs_range_and_say_it() -> None:
    accel.openreg.manual_seed(-1)  # 2**64 - 1, as torch takes it
    for bad in (2**70, -2**64):
        with pytest.raises(accel.InvalidArgumentError, match=r"seed .* out of range"):
            accel.openreg.manual_seed(bad)


@pytest.mark.parametrize("call, argument", [
    (lambda: accel.Generator("openreg:0").set_offset(-1), "offset"),
    (lambda: accel.Generator("openreg:0").set_offset(2**64), "offset"),
])
def test_a_generator_offset_out_of_range_names_the_argument(
        call: Callable[[], object], argument: str) -> None:
    with pytest.raises(accel.InvalidArgumentError) as error:
        call()
    message = str(error.value)
    assert "incompatible function arguments" not in message
    assert argument in message and r"[0, 18446744073709551615]" in message, message


# A bool is an int to Python, but never a size, count or index: it is
# refused naming the argument, as seeds and device arguments refuse it.
@pytest.mark.parametrize("call, argument", [
    (lambda: accel.empty(True), "nbytes"),
    (lambda: accel.Device("openreg", True), "device index"),
    (lambda: accel.openreg.set_execution_units(False, 2), "device index"),
    (lambda: accel.openreg.fail_nth_allocation(True), "nth"),
    (lambda: accel.openreg.Stream(0, priority=True), "priority"),
    (lambda: accel.Generator("openreg:0").set_offset(True), "offset"),
])
def test_a_bool_for_an_int_argument_is_refused_naming_it(
        call: Callable[[], object], argument: str) -> None:
    with pytest.raises(accel.InvalidArgumentError,
                       match=re.escape(argument) + r" must be an int, not (bool|True|False)"):
        call()

"""Errors in Python's words: a message names Python's calls and arguments,
never C++ spellings or source locations (those are the exception's
`cpp_location`), says the real cause, and an out-of-memory message starts as
torch's does, with the advice for the limit that applied."""

import re
from typing import Any, Callable, List, Tuple, Type

import numpy as np
import pytest

from conftest import RunPython
import accel

SOURCE_LOCATION = re.compile(r"\[[\w./-]+\.(cpp|h|cc|cu|hpp):\d+\]")


def _hook_named(suffix: str) -> str:
    """The C++ hook name ending in `suffix`, from the catalogue."""
    (name,) = [n for n, _group, _probe in accel._C._hook_catalogue() if n.endswith(suffix)]
    return name


def _error(call: Callable[[], object], kind: Type[BaseException] = accel.Error) -> Any:
    with pytest.raises(kind) as info:
        call()
    return info.value


def _in_python_words(error: BaseException) -> str:
    text = str(error)
    assert not SOURCE_LOCATION.search(text), text
    for cpp in ("::", "EventFlags", "{.", _hook_named("MemoryFraction") + "("):
        assert cpp not in text, text
    return text


def test_the_cpp_source_location_is_an_attribute_not_part_of_the_message() -> None:
    error = _error(lambda: accel.openreg.set_device(99), accel.InvalidArgumentError)
    _in_python_words(error)
    assert re.fullmatch(r"[\w./-]+\.(cpp|h):\d+(; [\w./-]+\.(cpp|h):\d+)*", error.cpp_location)


def test_an_error_wrapping_another_keeps_both_locations_out_of_its_message() -> None:
    accel.openreg.init()
    accel.openreg.fail_nth_allocation(1)
    error = _error(lambda: accel.empty(4096, device="openreg:0"), accel.OutOfMemoryError)
    text = _in_python_words(error)
    assert "fault injection" in text
    # The core's cache took its out-of-memory path for the plugin's refusal
    # (the plugin boundary carries the reason, not a C++ location).
    assert error.cpp_location.startswith("src/core/")


def test_elapsed_time_without_timing_names_pythons_argument() -> None:
    start, end = accel.openreg.Event(), accel.openreg.Event()
    start.record()
    end.record()
    end.synchronize()
    text = _in_python_words(_error(lambda: start.elapsed_time(end), ValueError))
    assert "enable_timing=True" in text and "accel.Event(enable_timing=True)" in text
    timed = accel.openreg.Event(enable_timing=True)
    timed.record()
    text = _in_python_words(_error(lambda: timed.elapsed_time(end), ValueError))
    assert "the end event was created without timing" in text


def test_an_unregistered_backend_is_loaded_with_pythons_call() -> None:
    text = _in_python_words(_error(lambda: accel.Stream(device="hpu"), accel.NotAvailableError))
    assert 'accel.load_backend("/path/to/libaccel_hpu.so")' in text


def test_a_wrong_argument_type_gives_the_public_signature_not_pybind11s() -> None:
    text = str(_error(lambda: accel.empty("x"), TypeError))  # type: ignore[arg-type]
    assert text.startswith("accel.empty(nbytes: int, device=None, *, pinned=False)")
    assert "must be an int, not str" in text
    assert "incompatible function arguments" not in text and "_empty" not in text
    text = str(_error(lambda: accel.empty(8, device=3.5), TypeError))  # type: ignore[arg-type]
    assert "device must be" in text and "float" in text


def test_a_non_contiguous_source_is_named_as_the_cause() -> None:
    dst = accel.empty(16, device="openreg:0")
    strided = np.zeros((4, 8), dtype=np.uint8)[:, :4]
    text = _in_python_words(_error(lambda: dst.copy_(strided), accel.InvalidArgumentError))
    assert "not C-contiguous" in text and "numpy.ascontiguousarray" in text
    readonly = np.zeros(16, dtype=np.uint8)
    readonly.flags.writeable = False
    text = _in_python_words(_error(lambda: dst.copy_to(readonly), accel.InvalidArgumentError))
    assert "read-only" in text


def test_out_of_memory_starts_as_torchs_and_advises_the_fraction_when_it_refused(
        run_python: RunPython) -> None:
    result = run_python("""
        import accel
        accel.openreg.set_per_process_memory_fraction(0.01)
        try:
            accel.empty(8 << 20, device="openreg:0")
        except accel.OutOfMemoryError as e:
            print(e)
    """)
    assert result.returncode == 0, result.stderr
    text = result.stdout.strip()
    assert text.startswith("openreg:0 is out of memory. Tried to allocate 8.00 MiB"), text
    assert "memory fraction" in text and "set_per_process_memory_fraction()" in text
    assert "ACCEL_OPENREG_MEMORY" not in text  # the device was never asked
    assert ".;" not in text and not SOURCE_LOCATION.search(text)


def test_out_of_memory_of_the_device_itself_advises_its_capacity(run_python: RunPython) -> None:
    # Above the capacity, and below it with the rest of the device in use.
    result = run_python("""
        import accel
        try:
            accel.empty(96 << 20, device="openreg:0")
        except accel.OutOfMemoryError as e:
            print(e)
        held = accel.empty(40 << 20, device="openreg:0")
        try:
            accel.empty(30 << 20, device="openreg:0")
        except accel.OutOfMemoryError as e:
            print(e)
    """, env={"ACCEL_OPENREG_MEMORY": "64MiB"})
    assert result.returncode == 0, result.stderr
    above, below = result.stdout.strip().splitlines()
    assert above.startswith("openreg:0 is out of memory. Tried to allocate 96.00 MiB"), above
    assert below.startswith("openreg:0 is out of memory. Tried to allocate 30.00 MiB"), below
    for text in (above, below):
        assert "ACCEL_OPENREG_MEMORY" in text and "memory fraction" not in text


def test_causes_of_an_opencl_out_of_memory_are_separate_sentences(run_python: RunPython) -> None:
    result = run_python("""
        import sys
        import accel
        if "accel.opencl._native" not in sys.modules:
            raise SystemExit("skip: accel built without the OpenCL backend")
        import accel.opencl
        if not accel.opencl.is_available():
            raise SystemExit("skip: no usable OpenCL device")
        limit = accel.opencl.device_info(0)["max_allocation_bytes"]
        try:
            accel.empty(limit + 1, device="opencl:0")
        except accel.OutOfMemoryError as e:
            print(e)
    """)
    if result.stderr.startswith("skip: "):
        pytest.skip(result.stderr[len("skip: "):].strip())
    assert result.returncode == 0, result.stderr
    text = result.stdout.strip()
    assert text.startswith("opencl:0 is out of memory. Tried to allocate"), text
    # The core's message, then the plugin's reason for refusing the request
    # (above what clSVMAlloc can make), in brackets.
    assert "CL_DEVICE_MAX_MEM_ALLOC_SIZE" in text
    assert ".;" not in text and ". [" in text and text.endswith("]"), text


def test_a_stream_or_event_method_given_another_type_names_its_public_signature() -> None:
    s = accel.openreg.Stream()
    e = accel.openreg.Event()
    # Each passes another type on purpose (the ignores): the refusal is the test.
    calls: List[Tuple[Callable[[], object], str]] = [
        (lambda: s.wait_stream(3), "Stream.wait_stream(stream: accel.Stream)"),  # type: ignore[arg-type]
        (lambda: s.wait_event(3), "Stream.wait_event(event: accel.Event)"),  # type: ignore[arg-type]
        (lambda: e.record(3), "Event.record(stream: accel.Stream | None"),  # type: ignore[arg-type]
        (lambda: e.wait("s"), "Event.wait(stream: accel.Stream | None"),  # type: ignore[arg-type]
        (lambda: e.elapsed_time(3), "Event.elapsed_time(end: accel.Event)")]  # type: ignore[arg-type]
    for call, signature in calls:
        text = str(_error(call, TypeError))
        assert text.startswith(signature), text
        assert "incompatible function arguments" not in text and "accel._C" not in text


def test_the_packages_functions_check_their_arguments_before_the_binding_does() -> None:
    for call, signature in (
            (lambda: accel.openreg.Stream(priority="high"),  # type: ignore[arg-type]
             "accel.openreg.Stream(device=None, priority=0): priority must be int, not str"),
            (lambda: accel.openreg.Event(enable_timing="yes"),  # type: ignore[arg-type]
             "accel.openreg.Event(enable_timing=False, blocking=False, interprocess=False): "
             "enable_timing must be bool or int, not str"),
            (lambda: accel.openreg.set_rng_state(3),  # type: ignore[arg-type]
             "accel.openreg.set_rng_state(new_state, device=None): new_state must be"),
            (lambda: accel.memory._record_memory_history(
                max_entries="many"),  # type: ignore[arg-type]
             "_record_memory_history(enabled='all', context='all', stacks='all', "
             "max_entries=100000): max_entries must be int, not str"),
            (lambda: accel.openreg.set_stream_latency(
                accel.openreg.Stream(), "slow"),  # type: ignore[arg-type]
             "accel.openreg.set_stream_latency(stream, microseconds): microseconds must be")):
        text = str(_error(call, TypeError))
        assert text.startswith(signature), text
        assert "incompatible" not in text

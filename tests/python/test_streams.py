"""Streams, events, the GIL released around waits, fork and interpreter exit."""

import os
import threading
import time
from typing import Callable, List, Tuple

import pytest

from conftest import RunPython
import accel


def test_stream_context_manager_sets_and_restores_stream_and_device() -> None:
    accel.openreg.set_device(0)
    before = accel.openreg.current_stream(1)
    s = accel.openreg.Stream(1)
    assert isinstance(s, accel.Stream) and s.device == accel.Device("openreg:1")
    with s:
        assert accel.openreg.current_device() == 1
        assert accel.openreg.current_stream() == s
    assert accel.openreg.current_device() == 0
    assert accel.openreg.current_stream(1) == before
    with pytest.raises(ValueError):
        with s:
            raise ValueError("inside")
    assert accel.openreg.current_stream(1) == before


def test_events_order_streams() -> None:
    a = accel.openreg.Stream(0)
    b = accel.openreg.Stream(0)
    accel.openreg.set_stream_latency(a, 200_000)
    data = accel.empty(4 * 1024, device="openreg:0")
    accel.openreg.fill_uniform(data, stream=a)
    done = a.record_event()
    assert not done.query()
    b.wait_event(done)
    start = accel.openreg.Event(enable_timing=True)
    end = accel.openreg.Event(enable_timing=True)
    start.record(b)
    accel.openreg.fill_uniform(data, stream=b)
    end.record(b)
    end.synchronize()
    assert done.query()
    assert end.elapsed_time(end) == 0.0 or end.elapsed_time(end) >= 0.0
    assert start.elapsed_time(end) >= 0.0
    b.wait_stream(a)
    b.synchronize()


def test_event_errors_are_clear() -> None:
    e = accel.openreg.Event()
    assert e.query()
    with pytest.raises(accel.InvalidArgumentError, match="never recorded"):
        accel.openreg.current_stream().wait_event(e)
    e.record()
    with pytest.raises(accel.InvalidArgumentError):
        e.record(accel.openreg.Stream(1))
    with pytest.raises(accel.NotSupportedError):
        accel.openreg.Event(interprocess=True)


def test_four_threads_two_devices_wait_without_blocking_each_other() -> None:
    accel.openreg.init()
    slow = accel.openreg.Stream(0)
    accel.openreg.set_stream_latency(slow, 1_500_000)  # 1.5 s per operation
    slow_buffer = accel.empty(4096, device="openreg:0")
    accel.openreg.fill_uniform(slow_buffer, stream=slow)
    waiting_started = threading.Event()
    finished = {}

    def slow_waiter() -> None:
        waiting_started.set()
        slow.synchronize()  # holds no GIL while it waits
        finished["slow"] = time.monotonic()

    def fast_worker(name: str, device: int) -> None:
        waiting_started.wait()
        with accel.openreg.device(device):
            buf = accel.empty(4096, device=f"openreg:{device}")
            for _ in range(20):
                accel.openreg.fill_uniform(buf)
                accel.openreg.current_stream().synchronize()  # not the device: the slow stream is on 0
        finished[name] = time.monotonic()

    threads = [threading.Thread(target=slow_waiter)]
    threads += [threading.Thread(target=fast_worker, args=(f"fast{i}", 1)) for i in range(2)]
    threads += [threading.Thread(target=fast_worker, args=("fast_dev0", 0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert set(finished) == {"slow", "fast0", "fast1", "fast_dev0"}
    for name in ("fast0", "fast1", "fast_dev0"):
        assert finished[name] < finished["slow"], finished


def test_fork_child_gets_the_initialised_before_fork_error() -> None:
    accel.openreg.init()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, never return into pytest
        os.close(read_end)
        try:
            accel.openreg.synchronize()
            message = b"no error"
        except accel.DeviceError as e:
            message = b"DeviceError: " + str(e).encode()
        except BaseException as e:  # noqa: BLE001
            message = b"other: " + repr(e).encode()
        os.write(write_end, message)
        os._exit(0)
    os.close(write_end)
    chunks: List[bytes] = []
    while True:
        chunk = os.read(read_end, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    report = b"".join(chunks).decode()
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert report.startswith("DeviceError: "), report
    assert "fork" in report


def test_interpreter_exit_with_live_streams_and_work(run_python: RunPython) -> None:
    result = run_python("""
        import accel
        streams = [accel.openreg.Stream(i % 2) for i in range(6)]
        bufs = [accel.empty(1 << 16, device=s.device) for s in streams]
        for s, b in zip(streams, bufs):
            accel.openreg.set_stream_latency(s, 20_000)
            accel.openreg.fill_uniform(b, stream=s)
        events = [s.record_event() for s in streams]
        g = accel.openreg.Graph()
        print("exiting")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "exiting"


def test_query_fast_methods_keep_the_pybind11_behaviour() -> None:
    # Stream.query and Event.query skip pybind11's dispatcher
    # (python/src/fast_call.cpp): errors, docstrings and odd instances must
    # still behave as the pybind11 methods do.
    s = accel.openreg.Stream(0)
    assert s.query() is True
    assert (accel._C.Stream.query.__doc__ or "").startswith("query(self")
    assert (accel._C.Event.query.__doc__ or "").startswith("query(self")
    assert accel.openreg.Event().query() is True  # never recorded
    with pytest.raises(TypeError):
        accel._C.Stream.query(5)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        accel._C.Event.query(accel.openreg.Stream(0))  # type: ignore[arg-type]
    # No C++ object behind it: the pybind11 method answers (an error, no crash).
    bare = accel._C.Stream.__new__(accel._C.Stream)
    with pytest.raises((TypeError, RuntimeError)):
        bare.query()
    # An error from the hooks is the accel error class, message without a
    # C++ source location.
    g = accel.openreg.Graph()
    with s:
        g.capture_begin()
        with pytest.raises(accel.DeviceError, match="is capturing graph") as info:
            s.query()
        assert ".cpp:" not in str(info.value)
        with pytest.raises(accel.DeviceError, match="invalid"):
            g.capture_end()
    assert s.query() is True


def test_a_backend_module_refuses_a_stream_or_event_of_another_backend() -> None:
    # A cuda stream object, made from its three integers without touching the
    # CUDA backend: accel.openreg must not make it current or record on it.
    foreign = accel.Stream(0, 0, accel._C._device_type_code("cuda"))
    before = accel.openreg.current_stream(0)
    uses: Tuple[Callable[[accel.Stream], object], ...] = (accel.openreg.set_stream,
                                                          accel.openreg.stream)
    for use in uses:
        with pytest.raises(ValueError, match=r"expects an accel\.Stream of 'openreg' "
                                             r"\(accel\.openreg\.Stream\), got one of 'cuda'"):
            use(foreign)
    with pytest.raises(TypeError, match="expects an accel.Stream of 'openreg'"):
        accel.openreg.set_stream("openreg:0")  # type: ignore[arg-type]
    assert accel.openreg.current_stream(0) == before
    own = accel.openreg.Event()
    assert own.device_type == "openreg"
    accel.openreg.Stream(0).record_event(own)

"""Buffers: allocation, copies, the buffer protocol and DLPack with numpy and torch."""

import os

import numpy as np
import pytest

from conftest import RunPython
import accel


def test_empty_on_cpu_device_and_pinned() -> None:
    cpu = accel.empty(100)
    assert cpu.device == accel.Device("cpu") and cpu.nbytes == 100 and len(cpu) == 100
    dev = accel.empty(4096, device="openreg:1")
    assert dev.device == accel.Device("openreg:1") and not dev.is_host_accessible
    pinned = accel.empty(4096, pinned=True)
    assert pinned.is_pinned and pinned.is_host_accessible
    assert accel.openreg._hooks.is_pinned_ptr(pinned.data_ptr())
    assert accel.openreg._hooks.device_from_ptr(dev.data_ptr()) == accel.Device("openreg:1")


def test_copies_between_host_objects_devices_and_back() -> None:
    payload = np.arange(1024, dtype=np.float32)
    d0 = accel.empty(payload.nbytes, device="openreg:0")
    d0.copy_(payload)
    d1 = d0.to("openreg:1")
    assert d1.device == accel.Device("openreg:1")
    out = np.zeros_like(payload)
    d1.copy_to(out)
    assert np.array_equal(out, payload)
    back = bytearray(payload.nbytes)
    d1.copy_to(back)
    assert bytes(back) == payload.tobytes()
    host = accel.empty(payload.nbytes, pinned=True)
    host.copy_(d1)
    assert host.tobytes() == payload.tobytes()
    d0.copy_(bytes(payload.nbytes))
    assert d0.tobytes() == bytes(payload.nbytes)


def test_buffer_protocol_shares_memory() -> None:
    buffer = accel.empty(16)
    view = memoryview(buffer)  # type: ignore[arg-type]  # buffer protocol
    view[:4] = b"abcd"
    assert buffer.tobytes()[:4] == b"abcd"
    array = np.frombuffer(buffer, dtype=np.uint8)  # type: ignore[call-overload]  # buffer protocol
    assert array.ctypes.data == buffer.data_ptr()


def test_device_buffer_refuses_the_buffer_protocol_and_dlpack() -> None:
    dev = accel.empty(64, device="openreg:0")
    with pytest.raises(BufferError, match="device memory"):
        memoryview(dev)  # type: ignore[arg-type]  # buffer protocol
    with pytest.raises(BufferError):
        np.from_dlpack(dev)


@pytest.mark.parametrize("pinned", [False, True])
def test_numpy_from_dlpack_without_copy(pinned: bool) -> None:
    buffer = accel.empty(64, pinned=pinned)
    array = np.from_dlpack(buffer)
    assert array.ctypes.data == buffer.data_ptr() and array.nbytes == 64
    # numpy < 2 imports DLPack read-only. (The ignore: the buffer protocol, which
    # typeshed names from Python 3.12.)
    memoryview(buffer)[:] = bytes([7]) * 64  # type: ignore[arg-type]
    assert array.tolist() == [7] * 64
    floats = array.view(np.float32)
    assert floats.shape == (16,)


@pytest.mark.parametrize("pinned", [False, True])
def test_torch_from_dlpack_without_copy(pinned: bool) -> None:
    torch = pytest.importorskip("torch")
    buffer = accel.empty(256, pinned=pinned)
    tensor = torch.from_dlpack(buffer)
    assert tensor.data_ptr() == buffer.data_ptr()
    assert tensor.numel() == 256 and tensor.dtype == torch.uint8
    tensor.fill_(3)
    assert buffer.tobytes() == bytes([3]) * 256
    del buffer  # the capsule keeps the memory alive
    assert int(tensor.sum()) == 3 * 256


def test_bad_buffer_input_is_clear() -> None:
    with pytest.raises(accel.InvalidArgumentError, match="negative"):
        accel.empty(-1)
    with pytest.raises(accel.InvalidArgumentError, match="sizes must match"):
        accel.empty(8, device="openreg:0").copy_(bytes(9))
    with pytest.raises(accel.InvalidArgumentError, match="not an openreg device"):
        accel.openreg.fill_uniform(accel.empty(16))
    with pytest.raises(accel.InvalidArgumentError, match="host memory"):
        accel._C.fill_uniform(accel.empty(16))
    with pytest.raises(accel.InvalidArgumentError, match="dtype 'int8'"):
        accel._C.fill_uniform(accel.empty(16, device="openreg:0"), dtype="int8")
    with pytest.raises(accel.InvalidArgumentError, match="stream is on"):
        accel.openreg.fill_uniform(accel.empty(16, device="openreg:0"),
                                   stream=accel.openreg.Stream(1))
    with pytest.raises(accel.InvalidArgumentError):
        accel.empty(8, device="openreg:0").copy_(object())
    with pytest.raises(accel.InvalidArgumentError, match="out of range"):
        accel.empty(8, device="openreg:7")
    with pytest.raises(accel.InvalidArgumentError):
        accel.empty(8, device="openreg:0").copy_to(b"immutable")


def test_device_copies_go_through_the_copies_hook_group() -> None:
    assert accel.openreg._hooks.supports("copies")
    dev = accel.empty(64, device="openreg:0")
    dev.copy_(bytes(range(64)))
    # The core's check of the group refuses a copy onto itself (overlapping ranges).
    with pytest.raises(accel.InvalidArgumentError, match="overlap"):
        dev.copy_(dev)
    assert dev.tobytes() == bytes(range(64))
    empty = accel.empty(0, device="openreg:1")
    empty.copy_(b"")
    assert empty.tobytes() == b""


TESTDEV = os.environ.get("ACCEL_TEST_TESTDEV_PLUGIN", "")


@pytest.mark.skipif(not TESTDEV, reason="the testdev plugin is built with the C++ tests")
def test_copies_reach_every_backend_and_cross_device_types(run_python: RunPython) -> None:
    # A fresh process: the test backend is loaded as a plugin, as a vendor's would be.
    result = run_python(f"""
        import numpy as np
        import accel
        (name,) = accel.load_backend({TESTDEV!r})["registered"]
        payload = np.arange(4099, dtype=np.uint8) * 7
        for size in (1, 7, payload.nbytes):
            src = payload[:size]
            dev = accel.empty(size, device=name + ":1").copy_(src)
            pinned = accel.empty(size, pinned=True, device=name).copy_(dev)
            assert pinned.tobytes() == src.tobytes(), size
            other = dev.to("openreg:1")          # testdev -> host -> openreg
            back = other.to(name + ":0")         # openreg -> host -> testdev
            assert back.device == accel.Device(name + ":0")
            assert back.tobytes() == src.tobytes(), size
        print("ok", accel._C.Hooks(name).supports("copies"))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok", "True"]


def test_record_stream_keeps_a_freed_buffer_until_that_streams_work_has_passed(
        run_python: RunPython) -> None:
    # On OpenCL, whose allocator waits on events: a buffer used by another
    # stream's work (here only declared, as work the backend does not see,
    # a user's own kernel on native_queue(), would be) is not handed out
    # again until that stream has passed the work it had at the free.
    result = run_python("""
        import sys
        import accel
        if "accel.opencl._native" not in sys.modules:
            raise SystemExit("skip: accel built without the OpenCL backend")
        if not accel.opencl.is_available():
            raise SystemExit("skip: no usable OpenCL device")
        nbytes = 3 << 16
        # Control: freed without record_stream, the block is handed out again at once.
        first = accel.empty(nbytes, device="opencl:0")
        address = first.data_ptr()
        del first
        assert accel.empty(nbytes, device="opencl:0").data_ptr() == address
        busy = accel.opencl.Stream(0)
        # The assertion is made only when the stream had not passed its work
        # after the new allocation (so not before it either); else again with
        # more work.
        for elements in (1 << 22, 1 << 24, 1 << 26):
            work = accel.empty(4 * elements, device="opencl:0")
            accel.opencl.fill_uniform(work, stream=busy)
            buf = accel.empty(nbytes, device="opencl:0")  # on the default stream
            address = buf.data_ptr()
            buf.record_stream(busy)
            del buf
            again = accel.empty(nbytes, device="opencl:0")
            still_busy = not busy.query()
            busy.synchronize()
            if still_busy:
                assert again.data_ptr() != address, "handed out while the stream used it"
                print("ok")
                break
        else:
            raise SystemExit("skip: the stream finished its work before the check every time")
    """, env={"ACCEL_ACCELERATOR": "opencl"})
    if result.stderr.startswith("skip: "):
        pytest.skip(result.stderr[len("skip: "):].strip())
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_record_stream_on_openreg_memory_holds_nothing_back_as_its_work_already_does() -> None:
    # openreg's allocator has no events (its SegmentSource describes work as
    # done when enqueued); its operations hold the buffers they name instead.
    accel.openreg.init()
    busy = accel.openreg.Stream(0)
    buf = accel.empty(4096, device="openreg:0")
    buf.record_stream(busy)
    buf.record_stream(busy)  # again: once is enough


def test_record_stream_refuses_host_memory_other_devices_and_non_streams() -> None:
    accel.openreg.init()
    dev = accel.empty(4096, device="openreg:0")
    with pytest.raises(accel.InvalidArgumentError, match="is on openreg:0 but the stream is on"):
        dev.record_stream(accel.openreg.Stream(1))
    with pytest.raises(TypeError, match=r"record_stream\(stream: accel.Stream\)"):
        dev.record_stream(0)  # type: ignore[arg-type]
    with pytest.raises(accel.InvalidArgumentError, match="host memory"):
        accel.empty(4096, pinned=True).record_stream(accel.openreg.Stream(0))
    dev.record_stream(accel.openreg.default_stream(0))  # its own stream: nothing to hold

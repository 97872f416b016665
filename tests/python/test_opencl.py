"""accel.opencl: the OpenCL backend from Python, on the machine's OpenCL driver
(pocl on the CPU here and in CI). Skipped, with the backend's reason, where no
OpenCL device is usable."""

import numpy as np
import pytest

import accel

opencl = pytest.importorskip("accel.opencl", reason="accel built without the OpenCL backend")


@pytest.fixture
def device() -> accel.Device:
    if not opencl.is_available():
        pytest.skip("no usable OpenCL device: " + opencl.availability()["reason"])
    return accel.Device("opencl:0")


def test_module_has_the_backend_api_and_says_why() -> None:
    assert opencl.device_count() == opencl.availability()["device_count"]
    if not opencl.is_available():
        assert opencl.availability()["reason"]


def test_device_info_and_native_handles(device: accel.Device) -> None:
    info = opencl.device_info(0)
    assert info["coarse_grain_svm"] and info["name"]
    handles = opencl.native_handles(0)
    assert handles["context"] != 0 and handles["device"] != 0
    assert opencl.native_queue(opencl.current_stream()) != 0


def test_fills_match_the_host_fill_and_read_back(device: accel.Device) -> None:
    n = 10_001
    buf = accel.empty(n * 4, device=device)
    opencl.manual_seed(1234)
    opencl.fill_uniform(buf, -2.0, 3.0)
    opencl.synchronize()
    got = np.zeros(n, dtype=np.float32)
    buf.copy_to(got)
    assert got.min() >= -2.0 and got.max() < 3.0
    # The same seed again gives the same numbers (position restarts at 0).
    opencl.manual_seed(1234)
    again = accel.empty(n * 4, device=device)
    opencl.fill_uniform(again, -2.0, 3.0)
    out = np.zeros(n, dtype=np.float32)
    again.copy_to(out)
    assert np.array_equal(got, out)


def test_normal_fill_statistics(device: accel.Device) -> None:
    n = 100_000
    buf = accel.empty(n * 8, device=device)
    opencl.manual_seed(7)
    opencl.fill_normal(buf, 1.0, 2.0, dtype="float64")
    out = np.zeros(n, dtype=np.float64)
    buf.copy_to(out)
    assert abs(out.mean() - 1.0) < 0.05 and abs(out.std() - 2.0) < 0.05


def test_fill_refuses_a_buffer_of_another_device(device: accel.Device) -> None:
    with pytest.raises(accel.InvalidArgumentError):
        opencl.fill_uniform(accel.empty(64))


def test_streams_and_events(device: accel.Device) -> None:
    s = opencl.Stream()
    start = opencl.Event(enable_timing=True)
    end = opencl.Event(enable_timing=True)
    start.record(s)
    end.record(s)
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0
    assert s.query()


def test_graph_replays_a_captured_fill(device: accel.Device) -> None:
    if "graphs" not in opencl.capabilities():
        pytest.skip("the graphs group is not declared here: " + opencl._hooks.show_config())
    n = 5000
    buf = accel.empty(n * 4, device=device)
    buf.copy_(np.zeros(n, dtype=np.float32))
    with opencl.stream(opencl.Stream()):
        g = opencl.Graph()
        with opencl.graph(g):
            opencl.fill_uniform(buf, -1.0, 1.0)
        opencl.synchronize()
        out = np.ones(n, dtype=np.float32)
        buf.copy_to(out)
        assert not out.any(), "the capture ran the fill instead of recording it"
        g.replay()
        g.replay()
        opencl.synchronize()
    buf.copy_to(out)
    assert out.any() and out.min() >= -1.0 and out.max() < 1.0
    g.reset()


def test_every_graph_replay_draws_new_numbers(device: accel.Device) -> None:
    if "graphs" not in opencl.capabilities():
        pytest.skip("the graphs group is not declared here: " + opencl._hooks.show_config())
    n = 3001
    buf = accel.empty(n * 4, device=device)
    replays = [np.zeros(n, dtype=np.float32) for _ in range(2)]
    with opencl.stream(opencl.Stream()):
        opencl.manual_seed(99)
        g = opencl.Graph()
        with opencl.graph(g):
            opencl.fill_uniform(buf, -1.0, 1.0)
        for out in replays:
            g.replay()
            opencl.synchronize()
            buf.copy_to(out)
        g.reset()
    assert not np.array_equal(replays[0], replays[1])
    # The numbers of the same fills run twice without a graph, from the seed.
    opencl.manual_seed(99)
    for want in replays:
        opencl.fill_uniform(buf, -1.0, 1.0)
        got = np.zeros(n, dtype=np.float32)
        buf.copy_to(got)
        assert np.array_equal(got, want)


def test_memory_info_is_the_global_memory_less_what_the_backend_holds(device: accel.Device) -> None:
    opencl.empty_cache()
    free, total = opencl.get_memory_info(0)
    assert total == opencl.get_device_properties(0).total_memory  # CL_DEVICE_GLOBAL_MEM_SIZE
    assert 0 < free <= total
    buf = accel.empty(32 << 20, device=device)
    during_free, _ = accel.memory.get_memory_info(device)
    assert during_free <= free - (32 << 20)  # OpenCL tells no free memory: our accounting
    del buf
    opencl.empty_cache()
    assert opencl.get_memory_info(0)[0] == free


def test_host_memory_stats_and_fraction_on_opencl(device: accel.Device) -> None:
    before = opencl.host_memory_stats()
    pinned = accel.empty(4096, pinned=True, device="opencl")
    assert opencl.host_memory_stats()["active_requests.current"] == \
        before["active_requests.current"] + 1
    del pinned
    opencl.empty_cache()
    opencl.set_per_process_memory_fraction(0.0, 0)
    try:
        with pytest.raises(accel.OutOfMemoryError):
            accel.empty(32 << 20, device=device)
    finally:
        opencl.set_per_process_memory_fraction(1.0, 0)
    assert accel.empty(32 << 20, device=device).nbytes == 32 << 20

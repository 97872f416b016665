"""The torch.accelerator-shaped API, the per-backend modules and lazy init."""

from pathlib import Path
from typing import Callable, List

import pytest

from conftest import RunPython
import accel


def test_import_touches_no_device(run_python: RunPython) -> None:
    result = run_python("""
        import accel
        assert accel.openreg.is_available() and accel.openreg.device_count() == 2
        assert accel.openreg.current_device() == 0
        assert not accel.openreg.is_initialized()
        accel.openreg.set_device(1)
        assert not accel.openreg.is_initialized()
        accel.openreg.synchronize()
        assert accel.openreg.is_initialized()
        print("ok")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_device_agnostic_api() -> None:
    assert accel.is_available()
    assert accel.current_accelerator() == accel.Device("openreg")
    assert accel.device_count() == 2
    accel.set_device_index(1)
    assert accel.current_device_index() == 1
    with accel.device_index(0):
        assert accel.current_device_index() == 0
    assert accel.current_device_index() == 1
    accel.synchronize()
    stream = accel.current_stream()
    assert stream.device == accel.Device("openreg:1")
    new = accel.openreg.Stream(1)
    accel.set_stream(new)
    assert accel.current_stream() == new
    accel.set_stream(stream)


def test_device_context_manager_restores_on_exception() -> None:
    accel.openreg.set_device(1)
    with pytest.raises(KeyError):
        with accel.openreg.device(0):
            assert accel.openreg.current_device() == 0
            raise KeyError("boom")
    assert accel.openreg.current_device() == 1
    with accel.openreg.device(None):
        assert accel.openreg.current_device() == 1
    with accel.openreg.device("openreg:0"):
        assert accel.openreg.current_device() == 0
    with pytest.raises(accel.InvalidArgumentError):
        with accel.openreg.device("cuda:0"):
            pass


def test_backend_lookup() -> None:
    assert accel.backend("openreg") is accel.openreg
    assert accel.backend("cuda") is accel.cuda
    hip = accel.backend("hip")
    assert hip is accel.backend("hip")
    assert hip.device_count() == 0 and not hip.is_available()
    with pytest.raises(accel.NotAvailableError):
        hip.current_device()
    with pytest.raises(accel.InvalidArgumentError):
        accel.backend("no_such_backend")


def test_capabilities_shape_the_module() -> None:
    caps = accel.openreg.capabilities()
    assert {"low", "high", "streams", "events", "graphs"} <= set(caps)


def test_memory_functions() -> None:
    accel.openreg.init()
    base = accel.openreg.memory_allocated(0)
    buffer = accel.empty(1 << 16, device="openreg:0")
    assert accel.openreg.memory_allocated(0) >= base + (1 << 16)
    stats = accel.memory.memory_stats("openreg:0")
    for key in ("allocated_bytes.all.current", "allocated_bytes.all.peak",
                "reserved_bytes.all.current", "segment.all.current", "num_ooms"):
        assert key in stats
    assert accel.memory.max_memory_allocated() >= accel.memory.memory_allocated()
    assert accel.memory.memory_reserved() >= 0 and accel.memory.max_memory_reserved() >= 0
    del buffer
    accel.memory.reset_peak_memory_stats()
    assert accel.memory.max_memory_allocated(0) == accel.memory.memory_allocated(0)
    accel.memory.empty_cache()


def test_memory_stats_has_every_flat_key_and_exact_figures_after_a_free() -> None:
    accel.openreg.init()
    accel.memory.empty_cache()
    stats = accel.memory.memory_stats("openreg:0")
    # Every key torch.cuda.memory_stats() has, pools and fields included.
    for stat in ("allocation", "segment", "active", "inactive_split", "allocated_bytes",
                 "reserved_bytes", "active_bytes", "inactive_split_bytes",
                 "requested_bytes"):
        for pool in ("all", "small_pool", "large_pool"):
            for field in ("current", "peak", "allocated", "freed"):
                assert f"{stat}.{pool}.{field}" in stats
    for key in ("oversize_allocations.current", "oversize_segments.peak",
                "num_alloc_retries", "num_ooms", "num_sync_all_streams",
                "num_device_alloc", "num_device_free", "max_split_size"):
        assert key in stats
    before = stats["allocated_bytes.small_pool.current"]
    a = accel.empty(3000, device="openreg:0")
    b = accel.empty(3000, device="openreg:0")
    del a  # held for reuse by the cache, counted as freed at once
    stats = accel.memory.memory_stats("openreg:0")
    assert stats["allocated_bytes.small_pool.current"] == before + 3072
    assert stats["active.small_pool.current"] >= 1
    del b
    stats = accel.memory.memory_stats("openreg:0")
    assert stats["allocated_bytes.small_pool.current"] == before
    accel.memory.empty_cache()
    assert accel.memory.memory_stats("openreg:0")["inactive_split.all.current"] == 0


def test_memory_history_raises_not_supported_until_declared(tmp_path: Path) -> None:
    if "memory_history" in accel.openreg.capabilities():
        accel.memory._record_memory_history()
        accel.empty(4096, device="openreg:0")
        accel.memory._dump_snapshot(str(tmp_path / "snap.pickle"))
        import pickle
        snap = pickle.loads((tmp_path / "snap.pickle").read_bytes())
        assert "segments" in snap and "device_traces" in snap
        accel.memory._record_memory_history(None)
        return
    calls: List[Callable[[], object]] = [
        accel.memory._record_memory_history, accel.memory._snapshot,
        lambda: accel.memory._dump_snapshot(str(tmp_path / "x"))]
    for call in calls:
        with pytest.raises(accel.NotSupportedError, match="memory_history"):
            call()


def test_graph_capture_and_replay() -> None:
    accel.openreg.init()
    src = accel.empty(64, device="openreg:0")
    src.copy_(bytes(range(64)))
    g = accel.openreg.Graph()
    s = accel.openreg.Stream(0)
    with accel.openreg.graph(g, stream=s):
        accel.openreg.fill_uniform(src, stream=s)
    g.replay()
    s.synchronize()
    assert src.tobytes() != bytes(range(64))
    g.reset()

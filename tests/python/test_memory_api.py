"""accel.memory and the backend modules' memory functions that torch.cuda has
beyond the statistics: get_memory_info / mem_get_info,
reset_accumulated_memory_stats, memory_summary, memory_snapshot,
host_memory_stats, set_per_process_memory_fraction; their bad input and
what they do before the backend is initialised."""

import math
import os
from types import ModuleType
from typing import Any, Callable, Iterator, List

import pytest

from conftest import RunPython
import accel

MiB = 1 << 20
NO_GROUPS = os.environ.get("ACCEL_TEST_NO_GROUPS_PLUGIN", "")


@pytest.fixture
def openreg() -> Iterator[ModuleType]:
    accel.openreg.init()
    accel.openreg.empty_cache()
    yield accel.openreg
    accel.openreg.set_per_process_memory_fraction(1.0, 0)
    accel.openreg.set_per_process_memory_fraction(1.0, 1)


def test_get_memory_info_is_free_and_total_and_free_drops_by_the_segment(
        openreg: ModuleType) -> None:
    free, total = accel.memory.get_memory_info("openreg:1")
    assert total == openreg.get_device_properties(1).total_memory
    assert free == total  # nothing reserved after empty_cache
    buf = accel.empty(4 * MiB, device="openreg:1")
    during_free, during_total = openreg.mem_get_info(1)
    assert during_total == total
    # What the allocator reserves counts as used, as with cudaMemGetInfo.
    assert during_free == total - openreg.memory_reserved(1)
    assert during_free < free
    del buf
    openreg.empty_cache()
    assert openreg.get_memory_info(1) == (free, total)


def test_get_memory_info_defaults_to_the_current_device(openreg: ModuleType) -> None:
    with openreg.device(1):
        assert accel.memory.get_memory_info() == accel.memory.get_memory_info("openreg:1")
        assert openreg.get_memory_info() == openreg.get_memory_info(1)


def test_bad_devices_are_refused_with_invalid_argument(openreg: ModuleType) -> None:
    count = openreg.device_count()
    calls: List[Callable[[Any], object]] = [
        lambda d: openreg.get_memory_info(d),
        lambda d: openreg.reset_accumulated_memory_stats(d),
        lambda d: openreg.set_per_process_memory_fraction(0.5, d),
        lambda d: openreg.memory_summary(d)]
    for call in calls:
        with pytest.raises(accel.InvalidArgumentError, match="out of range"):
            call(count)
        with pytest.raises(accel.InvalidArgumentError):
            call("cuda:0")  # another backend's device given to openreg's function
        with pytest.raises(accel.InvalidArgumentError):
            call(3.5)
    with pytest.raises(accel.InvalidArgumentError, match="out of range"):
        accel.memory.get_memory_info(f"openreg:{count}")
    with pytest.raises(accel.InvalidArgumentError):
        accel.memory.get_memory_info("openreg:x")


def test_reset_accumulated_memory_stats_zeroes_the_cumulative_figures(openreg: ModuleType) -> None:
    kept = accel.empty(8192, device="openreg:0")
    accel.empty(4096, device="openreg:0")  # allocated and freed at once
    before = accel.memory.memory_stats("openreg:0")
    assert before["allocated_bytes.all.allocated"] > 0
    accel.memory.reset_accumulated_memory_stats("openreg:0")
    after = accel.memory.memory_stats("openreg:0")
    for key, value in after.items():
        if key.endswith((".allocated", ".freed")) or key in (
                "num_alloc_retries", "num_ooms", "num_sync_all_streams",
                "num_device_alloc", "num_device_free"):
            assert value == 0, key
        else:  # current values, peaks and max_split_size stay
            assert value == before[key], key
    del kept
    stats = openreg.memory_stats(0)
    assert stats["allocated_bytes.all.freed"] == 8192
    assert stats["allocated_bytes.all.allocated"] == 0


def test_set_per_process_memory_fraction_caps_and_one_lifts_the_cap(openreg: ModuleType) -> None:
    _, total = openreg.get_memory_info(1)
    openreg.set_per_process_memory_fraction(0.25, 1)
    with pytest.raises(accel.OutOfMemoryError):
        accel.empty(total // 2, device="openreg:1")
    small = accel.empty(MiB, device="openreg:1")  # within the cap
    openreg.set_per_process_memory_fraction(0.0, 1)
    with pytest.raises(accel.OutOfMemoryError):
        accel.empty(64 * MiB, device="openreg:1")
    accel.memory.set_per_process_memory_fraction(1.0, "openreg:1")
    big = accel.empty(total // 2, device="openreg:1")
    assert big.nbytes == total // 2 and small.nbytes == MiB


def test_set_per_process_memory_fraction_refuses_bad_fractions(openreg: ModuleType) -> None:
    for bad in (-0.1, 1.5, math.nan, math.inf):
        with pytest.raises(accel.InvalidArgumentError, match="between 0 and 1"):
            openreg.set_per_process_memory_fraction(bad, 0)
        with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError, as torch's
            accel.memory.set_per_process_memory_fraction(bad, "openreg:0")
    for wrong in ("0.5", None, True, [0.5]):
        with pytest.raises(TypeError, match="float between 0 and 1"):
            openreg.set_per_process_memory_fraction(wrong, 0)
    assert openreg.get_memory_info(0)[1] > 0


def test_memory_summary_is_a_table_of_the_statistics(openreg: ModuleType) -> None:
    kept = accel.empty(3 * MiB, device="openreg:0")
    text = accel.memory.memory_summary("openreg:0")
    assert "openreg:0" in text
    stats = openreg.memory_stats(0)
    lines = text.splitlines()
    allocated = next(line for line in lines if line.strip().startswith("Allocated memory"))
    assert "current" in text and "peak" in text and "freed" in text
    assert f"{stats['allocated_bytes.all.current'] / MiB:.2f} MiB" in allocated
    allocations = next(line for line in lines if line.strip().startswith("Allocations"))
    assert allocations.split("|")[1].strip() == str(stats["allocation.all.current"])
    assert "from the small pool" in text and "from the large pool" in text
    short = openreg.memory_summary(0, abbreviated=True)
    assert "from the small pool" not in short and "Allocated memory" in short
    assert len(short.splitlines()) < len(lines)
    del kept


def test_memory_snapshot_is_the_segments_list(openreg: ModuleType) -> None:
    kept = accel.empty(5 * MiB, device="openreg:1")
    segments = accel.memory.memory_snapshot()
    assert segments == openreg.memory_snapshot()
    assert isinstance(segments, list) and segments
    mine = [s for s in segments if s["device"] == 1 and any(
        b["address"] == kept.data_ptr() for b in s["blocks"])]
    assert len(mine) == 1
    for key in ("address", "total_size", "allocated_size", "stream", "segment_type",
                "blocks"):
        assert key in mine[0]
    assert {s["device"] for s in openreg._snapshot()["segments"]} == {
        s["device"] for s in segments}


def test_host_memory_stats_follow_the_pinned_cache(openreg: ModuleType) -> None:
    before = accel.memory.host_memory_stats()
    for key in ("allocations.current", "allocated_bytes.peak", "active_requests.current",
                "active_bytes.current", "segment.current", "reserved_bytes.current",
                "num_host_alloc", "num_host_free"):
        assert key in before
    pinned = accel.empty(10000, pinned=True, device="openreg")
    during = openreg.host_memory_stats()
    assert during["active_requests.current"] == before["active_requests.current"] + 1
    assert during["active_bytes.current"] >= before["active_bytes.current"] + 10000
    assert during["allocated_bytes.current"] >= during["active_bytes.current"]
    assert during["allocated_bytes.current"] == during["reserved_bytes.current"]
    del pinned
    assert openreg.host_memory_stats()["active_requests.current"] == \
        before["active_requests.current"]


def test_functions_that_read_do_not_initialise_the_backend(run_python: RunPython) -> None:
    result = run_python("""
        import accel
        assert accel.memory.memory_stats() == {}
        accel.memory.empty_cache()
        assert accel.memory.memory_snapshot() == []
        assert accel.memory.host_memory_stats() == {}
        text = accel.memory.memory_summary()
        assert "Allocated memory" in text and "openreg:0" in text
        assert accel.openreg.memory_snapshot() == []
        print(accel.openreg.is_initialized())
        free, total = accel.memory.get_memory_info()   # this one initialises, as torch's
        print(accel.openreg.is_initialized(), 0 < free <= total)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "True", "True"]


def test_a_backend_without_devices_raises_not_available() -> None:
    if accel.cuda.is_available():
        pytest.skip("a CUDA device is present")
    cuda_calls: List[Callable[[], object]] = [
        accel.cuda.get_memory_info, accel.cuda.reset_accumulated_memory_stats,
        lambda: accel.cuda.set_per_process_memory_fraction(0.5)]
    for call in cuda_calls:
        with pytest.raises(accel.NotAvailableError):
            call()
    assert accel.cuda.memory_snapshot() == [] and accel.cuda.host_memory_stats() == {}


@pytest.mark.skipif(not NO_GROUPS, reason="the plugin tests' plugins are built with the C++ tests")
def test_a_backend_without_the_memory_group_raises_not_supported(run_python: RunPython) -> None:
    result = run_python(f"""
        import accel
        (name,) = accel.load_backend({NO_GROUPS!r})["registered"]
        module = accel.backend(name)
        for call in (module.get_memory_info, module.reset_accumulated_memory_stats,
                     lambda: module.set_per_process_memory_fraction(0.5)):
            try:
                call()
            except accel.NotSupportedError as e:
                assert name in str(e), str(e)
            else:
                raise AssertionError("no NotSupportedError")
        print("ok")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ok"]

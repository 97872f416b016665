"""Memory history from Python: the allocating line of Python code
in snapshots, torch's snapshot schema, and PyTorch 1.13's memory_viz reading
it."""

import threading
from typing import Any, Dict, Iterator, List

from conftest import RunPython
import accel
import pytest

HERE = __file__


@pytest.fixture(autouse=True)
def _history_off() -> Iterator[None]:
    accel.openreg.init()
    yield
    accel.memory._record_memory_history(enabled=None)


def _allocate_here(nbytes: int = 1 << 20) -> accel.Buffer:
    return accel.empty(nbytes, device="openreg:0")  # LINE_OF_ALLOCATION


def _line_of(marker: str) -> int:
    with open(HERE) as f:
        for number, text in enumerate(f, 1):
            if marker in text and "def _line_of" not in text and "_line_of(" not in text:
                return number
    raise AssertionError(marker)


def _live_blocks(snapshot: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [b for seg in snapshot["segments"] for b in seg["blocks"]
            if b["state"] == "active_allocated"]


def _block_at(snapshot: Dict[str, Any], address: int) -> Dict[str, Any]:
    (block,) = [b for b in _live_blocks(snapshot) if b["address"] == address]
    return block


def test_python_stacks_name_the_allocating_line_first() -> None:
    accel.memory._record_memory_history(stacks="python")
    buf = _allocate_here()
    block = _block_at(accel.memory._snapshot(), buf.data_ptr())
    frames = block["frames"]
    assert set(frames[0]) == {"filename", "line", "name"}
    ours = [f for f in frames if f["filename"] == HERE]
    assert ours[0] == {"filename": HERE, "line": _line_of("LINE_OF_ALLOCATION"),
                       "name": "_allocate_here"}
    assert ours[1]["name"] == "test_python_stacks_name_the_allocating_line_first"
    assert all(f["line"] > 0 for f in frames)  # python only: no C++ frames


def test_stacks_all_puts_python_frames_before_cpp_frames() -> None:
    accel.memory._record_memory_history(stacks="all")
    buf = _allocate_here()
    frames = _block_at(accel.memory._snapshot(), buf.data_ptr())["frames"]
    python = [i for i, f in enumerate(frames) if f["filename"].endswith(".py")]
    native = [i for i, f in enumerate(frames) if not f["filename"].endswith(".py")]
    assert python and native
    assert max(python) < min(native)


def test_trace_entries_carry_the_python_frames() -> None:
    accel.memory._record_memory_history(enabled="all", stacks="python")
    buf = _allocate_here()
    trace = accel.memory._snapshot()["device_traces"][0]
    (alloc,) = [e for e in trace if e["action"] == "alloc" and e["addr"] == buf.data_ptr()]
    assert any(f["filename"] == HERE and f["name"] == "_allocate_here" for f in alloc["frames"])


def test_state_mode_keeps_stacks_of_live_blocks_without_a_trace() -> None:
    accel.memory._record_memory_history(enabled="state", stacks="python")
    buf = _allocate_here()
    snapshot = accel.memory._snapshot()
    assert snapshot["device_traces"][0] == []
    assert _block_at(snapshot, buf.data_ptr())["frames"]


def test_context_none_records_no_stacks() -> None:
    accel.memory._record_memory_history(context=None)
    buf = _allocate_here()
    snapshot = accel.memory._snapshot()
    assert _block_at(snapshot, buf.data_ptr())["frames"] == []
    assert all(e["frames"] == [] for e in snapshot["device_traces"][0])


def test_another_threads_allocation_has_that_threads_stack() -> None:
    accel.memory._record_memory_history(stacks="python")
    out = []

    def worker_function() -> None:
        out.append(_allocate_here())

    t = threading.Thread(target=worker_function)
    t.start()
    t.join()
    frames = _block_at(accel.memory._snapshot(), out[0].data_ptr())["frames"]
    names = [f["name"] for f in frames]
    assert "worker_function" in names
    assert "test_another_threads_allocation_has_that_threads_stack" not in names


def test_bad_history_arguments_are_invalid_argument_errors() -> None:
    with pytest.raises(accel.InvalidArgumentError, match="stacks='cpp'"):
        accel.memory._record_memory_history(stacks="cpp")
    with pytest.raises(accel.InvalidArgumentError, match="context='some'"):
        accel.memory._record_memory_history(context="some")
    with pytest.raises(accel.InvalidArgumentError, match="enabled='yes'"):
        accel.memory._record_memory_history(enabled="yes")


def test_segments_carry_their_real_pool_id_and_expandability() -> None:
    accel.memory._record_memory_history()
    buf = _allocate_here()
    for seg in accel.memory._snapshot()["segments"]:
        assert seg["segment_pool_id"] == (0, 0)
        assert seg["is_expandable"] is False
    assert buf.nbytes


def test_expandable_segments_are_reported(run_python: RunPython) -> None:
    result = run_python("""
        import accel
        buf = accel.empty(8 << 20, device="openreg:0")  # large pool: expandable
        print(sorted({s["is_expandable"] for s in accel.memory._snapshot()["segments"]}))
    """, env={"ACCEL_ALLOC_CONF": "expandable_segments:True"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[True]"


def test_torch_1_13_memory_viz_reads_the_segments() -> None:
    viz = pytest.importorskip("torch.cuda._memory_viz")
    accel.memory._record_memory_history(stacks="python")
    keep = [_allocate_here(), _allocate_here(4096)]
    before = accel.memory._snapshot()["segments"]
    keep.append(_allocate_here(3 << 20))
    after = accel.memory._snapshot()["segments"]
    lines = viz.memory(after, format_flamegraph=lambda text: text)
    assert f"test_memory_history.py:{_line_of('LINE_OF_ALLOCATION')}:_allocate_here" in lines
    assert viz.segments(after, format_flamegraph=lambda text: text)
    assert "only_after" in viz.compare(before, after, format_flamegraph=lambda text: text)
    stats = viz.stats(after)  # asserts every segment's blocks add up
    assert stats["segments"] == len(after)
    assert int(stats["active_allocated"].value) >= sum(b.nbytes for b in keep)


def test_the_innermost_frame_is_the_callers_not_the_packages() -> None:
    # accel.empty is Python code of the package calling _C: the stack starts
    # at the line that called it.
    accel.memory._record_memory_history(stacks="python")
    buf = _allocate_here()
    frames = _block_at(accel.memory._snapshot(), buf.data_ptr())["frames"]
    assert frames[0] == {"filename": HERE, "line": _line_of("LINE_OF_ALLOCATION"),
                         "name": "_allocate_here"}
    package = accel.__file__.rsplit("/", 1)[0] + "/"
    assert not any(f["filename"].startswith(package) for f in frames)

"""`accel memviz` and `accel memreplay` read the pickle that
accel.memory._dump_snapshot writes (the tool's own pickle reader, not Python's)."""

import os
import pickle
import subprocess
from pathlib import Path

import pytest

import accel

TOOL = os.environ.get("ACCEL_TEST_TOOL", "")


@pytest.fixture
def snapshot_pickle(tmp_path: Path) -> Path:
    if "memory_history" not in accel.openreg.capabilities():
        pytest.skip("openreg does not declare memory_history")
    accel.memory._record_memory_history("all", max_entries=10000)
    try:
        kept = [accel.empty(4096 * (i % 5 + 1), device="openreg:0") for i in range(30)]
        del kept[::2]
        path = tmp_path / "snapshot.pickle"
        accel.memory._dump_snapshot(str(path))
    finally:
        accel.memory._record_memory_history(None)
    return path


@pytest.mark.skipif(not TOOL, reason="ACCEL_TEST_TOOL (the accel tool) is not set; "
                                         "ctest sets it when the tool is built")
def test_memviz_draws_the_pickle_of_dump_snapshot(snapshot_pickle: Path, tmp_path: Path) -> None:
    page = tmp_path / "memory.html"
    done = subprocess.run([TOOL, "memviz", str(snapshot_pickle), "-o", str(page)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    events = len(pickle.loads(snapshot_pickle.read_bytes())["device_traces"][0])
    assert f"{events} trace events of device 0" in done.stdout
    html = page.read_text()
    assert '<script type="application/json" id="memviz-data">' in html
    assert '"actions":["' in html


@pytest.mark.skipif(not TOOL, reason="ACCEL_TEST_TOOL (the accel tool) is not set; "
                                         "ctest sets it when the tool is built")
def test_memreplay_replays_the_pickle_of_dump_snapshot(snapshot_pickle: Path) -> None:
    done = subprocess.run([TOOL, "memreplay", "--json", str(snapshot_pickle)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert '"allocs": 30' in done.stdout

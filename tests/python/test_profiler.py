"""accel.profiler and the tracing layer from Python: the training-loop
example (python/examples/training_loop.py) under the profiler gives a trace
that passes the trace-format check, holds its hooks, stream work, graph and
allocator, and opens in headless Chromium as `accel trace view`'s page;
key_averages() counts the calls; ACCEL_TRACE writes a trace at exit; bad
values and paths are clear errors, the program otherwise unaffected."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

import accel
import accel.profiler

sys.path.insert(0, str(Path(__file__).parent))
import trace_format  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
STEPS = 4


def _hook(matches: Any) -> str:
    """The one hook of the catalogue `matches` picks (names are written once,
    in the catalogue: tests/core/hook_name_literals_test.cpp)."""
    (name,) = [n for n, _group, _probe in accel._C._hook_catalogue() if matches(n)]
    return name


FILL = _hook(lambda n: n.startswith("fill"))
HOST_TO_DEVICE = _hook(lambda n: n.endswith("HostToDevice"))
DEVICE_TO_HOST = _hook(lambda n: n.endswith("DeviceToHost"))
REPLAY = _hook(lambda n: n.endswith("Replay"))


def _training_loop() -> Any:
    spec = importlib.util.spec_from_file_location(
        "training_loop", ROOT / "python" / "examples" / "training_loop.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def profiled(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, Any]:
    path = tmp_path_factory.mktemp("profile") / "training.json"
    with accel.profiler.profile() as prof:
        _training_loop().train("openreg", STEPS)
    prof.export_chrome_trace(str(path))
    return {"prof": prof, "path": path, "trace": json.loads(path.read_text())}


def _named(trace: Dict[str, Any], name: str, cat: str) -> List[Dict[str, Any]]:
    return [e for e in trace["traceEvents"] if e.get("name") == name and e.get("cat") == cat]


def test_the_training_loops_trace_passes_the_format_check(profiled: Dict[str, Any]) -> None:
    assert trace_format.problems(profiled["trace"]) == []
    assert profiled["trace"]["otherData"]["dropped_events"] == 0


def test_the_format_check_catches_what_breaks_the_format() -> None:
    broken = {"traceEvents": [
        {"name": "a", "ph": "X", "ts": 1, "pid": 1, "tid": 1},  # no dur
        {"name": "b", "ph": "Q", "ts": 1, "pid": 1, "tid": 1},  # no such phase
        {"name": "c", "ph": "C", "ts": 1, "pid": 1, "args": {"v": "x"}},
        {"name": "d", "ph": "X", "cat": "hook", "ts": 0, "dur": 10, "pid": 1, "tid": 2},
        {"name": "e", "ph": "X", "cat": "hook", "ts": 5, "dur": 10, "pid": 1, "tid": 2},
    ]}
    found = "\n".join(trace_format.problems(broken))
    for rule in ("dropped_events", "needs a dur", "phase 'Q'", "counter's args",
                 "no process_name", "no thread_name", "without nesting"):
        assert rule in found


def test_the_trace_holds_hooks_stream_work_graphs_and_the_allocator(
        profiled: Dict[str, Any]) -> None:
    trace = profiled["trace"]
    fills = _named(trace, FILL, "hook")
    assert len(fills) == 2 + 4 * STEPS  # weights, the captured noise, 4 per step
    assert all(f["args"]["backend"] == "openreg" for f in fills)
    copies = _named(trace, HOST_TO_DEVICE, "device")
    assert len(copies) == STEPS
    assert {c["args"]["timing"] for c in copies} == {"events"}
    captures = [e for e in trace["traceEvents"] if e.get("cat") == "graph"]
    assert len(captures) == 1 and captures[0]["name"].startswith("capture graph ")
    replays = [e for e in trace["traceEvents"]
               if e.get("cat") == "device" and e["name"].startswith("replay graph")]
    assert len(replays) == STEPS
    allocated = [e["args"]["bytes"] for e in trace["traceEvents"]
                 if e.get("name") == "allocated bytes"]
    assert max(allocated) >= 4 * 256 * 1024
    assert any(e.get("name") == "empty_cache" for e in trace["traceEvents"])
    assert any(e.get("name") == "segment_alloc" for e in trace["traceEvents"])


def test_key_averages_counts_the_calls_and_makes_a_table(profiled: Dict[str, Any]) -> None:
    averages = profiled["prof"].key_averages()
    rows = {row.key: row for row in averages}
    assert rows[FILL].count == 2 + 4 * STEPS
    assert rows[REPLAY].count == STEPS
    assert rows[FILL].max_us >= rows[FILL].mean_us > 0
    totals = [row.total_us for row in averages]
    assert totals == sorted(totals, reverse=True)
    table = averages.table(row_limit=5)
    assert table.splitlines()[0].split() == ["Hook", "Calls", "Total", "Mean", "Max"]
    assert "openreg:0 · stream" in table
    with pytest.raises(ValueError, match="sort_by='bogus'"):
        averages.table(sort_by="bogus")


def test_a_second_profile_inside_the_first_is_refused() -> None:
    with accel.profiler.profile():
        with pytest.raises(accel.InvalidArgumentError, match="already running"):
            with accel.profiler.profile():
                pass
    # The first one ended cleanly: a new one starts.
    with accel.profiler.profile() as again:
        accel.openreg.current_stream()
    assert again.key_averages().hooks


def test_export_to_an_unwritable_path_names_it(tmp_path: Path) -> None:
    with accel.profiler.profile() as prof:
        accel.openreg.current_stream()
        with pytest.raises(accel.Error, match="no_such_dir"):
            prof.export_chrome_trace(str(tmp_path / "no_such_dir" / "t.json"))
    with pytest.raises(OSError):
        prof.export_chrome_trace(str(tmp_path / "no_such_dir" / "t.json"))


def _run(code: str, env: Dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env},
                          capture_output=True, text=True, timeout=120)


PROGRAM = ("import accel; b = accel.empty(4096, device='openreg:0'); "
           "accel.openreg.fill_uniform(b); accel.openreg.synchronize(); print('done')")


def test_accel_trace_writes_the_programs_trace_at_exit(tmp_path: Path) -> None:
    path = tmp_path / "env.json"
    run = _run(PROGRAM, {"ACCEL_TRACE": str(path)})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "done"
    trace = json.loads(path.read_text())
    assert trace_format.problems(trace) == []
    assert _named(trace, FILL, "hook")


@pytest.mark.parametrize("value,expected", [
    ("1", "is not a file path"),
    ("/no/such/dir/t.json", "does not exist"),
    (".", "it is a directory"),
])
def test_a_bad_accel_trace_is_one_line_naming_it_and_the_program_runs(
        value: str, expected: str) -> None:
    run = _run(PROGRAM, {"ACCEL_TRACE": value})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "done"
    lines = [line for line in run.stderr.splitlines() if "ACCEL_TRACE" in line]
    assert len(lines) == 1, run.stderr
    assert expected in lines[0] and value in lines[0] and "tracing stays off" in lines[0]


def _tool() -> str:
    tool = os.environ.get("ACCEL_TEST_TOOL")
    if not tool:
        pytest.skip("the accel tool is not built")
    return tool


def test_accel_trace_summary_reads_the_exported_trace(profiled: Dict[str, Any]) -> None:
    run = subprocess.run([_tool(), "trace", "summary", str(profiled["path"])],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    fill_row = next(line for line in run.stdout.splitlines() if line.startswith(FILL))
    assert fill_row.split()[1] == str(2 + 4 * STEPS)


def _browser_environment() -> Dict[str, str]:
    """This process's environment without what an ASan build's tests preload
    (LD_PRELOAD of libasan, ASan's options): Chromium is not instrumented, and
    started with ASan's runtime preloaded it hangs."""
    return {name: value for name, value in os.environ.items()
            if name not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")}


def test_the_trace_view_page_opens_in_headless_chromium(profiled: Dict[str, Any],
                                                        tmp_path: Path) -> None:
    browser = os.environ.get("ACCEL_CHROMIUM") or shutil.which("chromium") or shutil.which(
        "chromium-browser")
    if not browser:
        pytest.skip("chromium is not installed (Debian 'chromium')")
    page = tmp_path / "training.html"
    run = subprocess.run([_tool(), "trace", "view", str(profiled["path"]), "-o", str(page)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    dom = subprocess.run(
        [browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run",
         "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}",
         "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120, env=_browser_environment())
    assert dom.returncode == 0, dom.stderr
    assert "Uncaught" not in dom.stderr and ":CONSOLE" not in dom.stderr, dom.stderr
    assert "Drew " in dom.stdout and " memory charts" in dom.stdout
    assert 'id="error" hidden=""' in dom.stdout
    assert f"<td>{FILL}</td>" in dom.stdout


def test_an_opencl_trace_has_its_work_timed_by_opencl_profiling() -> None:
    opencl = pytest.importorskip("accel.opencl",
                                 reason="accel built without the OpenCL backend")
    if not opencl.is_available():
        pytest.skip("no usable OpenCL device: " + opencl.availability()["reason"])
    with accel.profiler.profile() as prof:
        device = accel.empty(1 << 16, device="opencl:0")
        opencl.fill_uniform(device)
        host = accel.empty(1 << 16, device="opencl", pinned=True)
        host.copy_(device)
        opencl.synchronize()
    trace = prof.trace()
    assert trace_format.problems(trace) == []
    work = {e["name"]: e for e in trace["traceEvents"] if e.get("cat") == "device"}
    assert work[FILL]["args"]["timing"] == "events"
    assert work[DEVICE_TO_HOST]["args"]["timing"] == "events"
    assert [e for e in trace["traceEvents"] if e.get("name") == "allocated bytes"]
    assert any(e.get("name") == "process_name" and e["args"]["name"] == "opencl:0"
               for e in trace["traceEvents"])


EXAMPLE_PROGRAM = """
import sys
import accel
accel.load_backend(sys.argv[1])
be = accel.backend("example")
device = accel.empty(4096, device="example:0")
be.fill_uniform(device)
host = accel.empty(4096, device="example", pinned=True)
host.copy_(device)
be.synchronize()
print("done")
"""


def test_accel_trace_traces_an_out_of_tree_plugin_down_to_its_own_functions(
        tmp_path: Path) -> None:
    plugin = os.environ.get("ACCEL_TEST_EXAMPLE_PLUGIN")
    if not plugin:
        pytest.skip("the out-of-tree example plugin is not built")
    path = tmp_path / "example.json"
    run = subprocess.run([sys.executable, "-c", EXAMPLE_PROGRAM, plugin],
                         env={**os.environ, "ACCEL_TRACE": str(path)},
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    trace = json.loads(path.read_text())
    assert trace_format.problems(trace) == []
    hooks = [e for e in trace["traceEvents"]
             if e.get("cat") == "hook" and e["args"]["backend"] == "example"]
    assert {FILL, DEVICE_TO_HOST} <= {e["name"] for e in hooks}
    # The plugin's own functions, each inside the hook that called it.
    plugin_calls = [e for e in trace["traceEvents"] if e.get("cat") == "plugin"]
    assert any(e["name"] == "plugin device_memory.allocate_segment" for e in plugin_calls)
    inner = next(e for e in plugin_calls if e["name"] == "plugin high.init")
    assert any(e["tid"] == inner["tid"] and e["ts"] <= inner["ts"] and
               inner["ts"] + inner["dur"] <= e["ts"] + e["dur"] + 1 for e in hooks), \
        "the plugin's init runs inside the hook that initialised the backend"
    work = {e["name"]: e for e in trace["traceEvents"] if e.get("cat") == "device"}
    assert work[FILL]["args"] == {"timing": "events", "elements": 1024}


def _small_file_limit() -> None:
    """In the child: files past 2 KiB cannot be written (a full disk, as the
    program sees it), and writing past it is an error, not a signal."""
    import resource
    import signal
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    _soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2048, hard))


def test_a_full_disk_at_exit_is_one_line_naming_the_file_and_the_exit_status_stays(
        tmp_path: Path) -> None:
    path = tmp_path / "full.json"
    run = subprocess.run([sys.executable, "-c", PROGRAM],
                         env={**os.environ, "ACCEL_TRACE": str(path)},
                         capture_output=True, text=True, timeout=120,
                         preexec_fn=_small_file_limit)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "done"
    lines = [line for line in run.stderr.splitlines() if "ACCEL_TRACE" in line]
    assert len(lines) == 1, run.stderr
    assert str(path) in lines[0] and "File too large" in lines[0]
    assert list(tmp_path.iterdir()) == []  # neither the file nor a partial one

"""A broken OpenCL driver while the devices are listed (docs/lifecycle.md,
"Discovery"; docs/opencl.md): accel.opencl.availability() answers within
ACCEL_DISCOVERY_TIMEOUT when the driver hangs, with the reason; and `accel
info` survives a driver that crashes, discovering it in a separate process.

The driver is a fake OpenCL loader (fake_opencl_loader.cpp) chosen with
ACCEL_OPENCL_LIBRARY; ACCEL_TEST_FAKE_OPENCL_DISCOVERY says whether its
clGetPlatformIDs hangs or crashes. Each scenario runs in a fresh process with
a bounded wait, so that a hang fails the test instead of hanging the suite.
"""

import json
import os
import subprocess
import sys
import textwrap
from typing import Dict, List, Optional

import pytest

import accel  # noqa: F401  (imports _C, which creates the backends' native modules)

# A hang detector, not a speed check: far above the 1 s bound the scenarios use.
_BOUND_S = 60

_LOADER = os.environ.get("ACCEL_TEST_FAKE_OPENCL_LOADER", "")
_TOOL = os.environ.get("ACCEL_TEST_TOOL", "")

pytestmark = [
    pytest.mark.skipif("accel.opencl._native" not in sys.modules,
                       reason="accel built without the OpenCL backend"),
    pytest.mark.skipif(not _LOADER or not os.path.exists(_LOADER),
                       reason="the fake OpenCL loader is not built "
                              "(target accel_fake_opencl_loader)"),
]


def _env(mode: str, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    env = dict(os.environ)
    env.update(extra or {})
    env.update({"ACCEL_OPENCL_LIBRARY": _LOADER, "ACCEL_TEST_FAKE_OPENCL_DISCOVERY": mode,
                "ACCEL_DISCOVERY_TIMEOUT": "1"})
    # In a sanitizer build the sanitizer would catch the crashing driver's
    # SIGSEGV and exit with a status of its own: let the child die of the
    # signal, as in a plain build.
    for name in ("ASAN_OPTIONS", "TSAN_OPTIONS"):
        env[name] = env.get(name, "") + ":handle_segv=0"
    return env


def _run(args: List[str], mode: str, what: str,
         env_extra: Optional[Dict[str, str]] = None) -> "subprocess.CompletedProcess[str]":
    try:
        return subprocess.run(args, env=_env(mode, env_extra), capture_output=True, text=True,
                              timeout=_BOUND_S)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"{what} hung (killed after {_BOUND_S} s); output so far: "
                    f"{e.stdout!r} {e.stderr!r}")


def _tool_info(mode: str, *extra: str) -> "subprocess.CompletedProcess[str]":
    if not _TOOL:
        pytest.skip("the accel tool is not built")
    # The OpenCL plugin beside libaccel, as the build lays it out.
    plugin = os.path.join(os.path.dirname(_TOOL), os.pardir, "lib", "libaccel_opencl.so")
    if not os.path.exists(plugin):
        pytest.skip("the OpenCL plugin is not built beside the tool")
    # Autoloaded, as `import accel` and a plain `accel info` find it: registered
    # without discovery, then discovered in the tool's separate process.
    return _run([_TOOL, "info", *extra], mode, "accel info",
                {"ACCEL_PLUGINS": os.path.abspath(plugin), "ACCEL_PLUGIN_PATH": ""})


def test_availability_answers_within_the_bound_when_the_driver_hangs() -> None:
    r = _run([sys.executable, "-c", textwrap.dedent("""
        import accel.opencl as o
        a = o.availability()
        print("count", a["device_count"])
        print("reason", a["reason"])
        print("available", o.is_available())
        """)], "hang", "accel.opencl.availability()")
    assert r.returncode == 0, r.stderr
    assert "count 0" in r.stdout, (r.stdout, r.stderr)
    assert "ACCEL_DISCOVERY_TIMEOUT" in r.stdout, (r.stdout, r.stderr)
    assert "the first discovery of 'opencl' devices did not finish" in r.stdout
    assert "available False" in r.stdout


def test_current_device_and_pinned_queries_answer_within_the_bound_when_the_driver_hangs() -> None:
    # None waits for the hung listing: the current device is the core's (the
    # thread's index, 0 until set, whatever the devices), setting one is
    # refused with the discovery's problem, and no pointer is pinned before
    # discovery.
    r = _run([sys.executable, "-c", textwrap.dedent("""
        import ctypes
        import accel
        import accel.opencl as o
        print("count", o.device_count())
        buffer = ctypes.create_string_buffer(16)
        print("pinned", accel._C.Hooks("opencl").is_pinned_ptr(ctypes.addressof(buffer)))
        print("current", o.current_device())
        try:
            o.set_device(0)
            print("set answered")
        except accel.NotAvailableError as e:
            print("set refused:", e)
        """)], "hang", "current_device() and is_pinned_ptr()")
    assert r.returncode == 0, r.stderr
    assert "count 0" in r.stdout, (r.stdout, r.stderr)
    assert "pinned False" in r.stdout, (r.stdout, r.stderr)
    assert "current 0" in r.stdout, (r.stdout, r.stderr)
    assert "set refused:" in r.stdout, (r.stdout, r.stderr)
    for line in r.stdout.splitlines():
        if line.startswith("set refused:"):
            assert "did not finish within" in line, r.stdout


def test_accel_info_reports_a_driver_that_hangs() -> None:
    r = _tool_info("hang")
    assert r.returncode == 0, r.stderr
    assert "the first discovery of 'opencl' devices did not finish" in r.stdout, r.stdout


def test_accel_info_survives_a_driver_that_crashes() -> None:
    r = _tool_info("crash")
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert "discovery of 'opencl' crashed (SIGSEGV) in a separate process" in r.stdout, \
        r.stdout
    r = _tool_info("crash", "--json")
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    opencl = [b for b in json.loads(r.stdout)["backends"] if b["name"] == "opencl"]
    assert len(opencl) == 1 and not opencl[0]["available"], r.stdout
    assert "crashed (SIGSEGV)" in opencl[0]["discovery_problem"], r.stdout

"""fork() and a broken OpenCL install, from Python (docs/lifecycle.md).

`import accel` touches no device, so a worker forked right after it may use
OpenCL itself (the DataLoader pattern); a worker forked after the parent
discovered OpenCL is refused with the "before fork()" DeviceError instead of
hanging at its first copy; and a broken OpenCL install (a FIFO vendor file,
a truncated driver, a bad ACCEL_OPENCL_LIBRARY) never takes `import accel`
or `accel info` down: they finish and say why OpenCL is unavailable.

Each scenario runs in a fresh interpreter (subprocess) with a bounded wait,
so that a hang fails the test instead of hanging the suite, and the forks
happen in that interpreter rather than in pytest's.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict, Iterable, Optional

import pytest

import accel

# A hang detector, not a speed check: far above what any scenario needs.
_BOUND_S = 120


def _run(code: str, env_extra: Optional[Dict[str, str]] = None,
         unset: Iterable[str] = ()) -> "subprocess.CompletedProcess[str]":
    env = dict(os.environ)
    for name in unset:
        env.pop(name, None)
    env.update(env_extra or {})
    try:
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                              capture_output=True, text=True, timeout=_BOUND_S)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"the scenario hung (killed after {_BOUND_S} s); output so far: "
                    f"{e.stdout!r} {e.stderr!r}")


def _opencl_usable() -> bool:
    r = _run("import accel, accel.opencl as o; print(o.is_available())")
    return r.returncode == 0 and r.stdout.strip().endswith("True")


# The child of os.fork reports through its exit status; the parent waits for
# its end (the pipe closing) with a bound and kills it when it hangs (124).
_FORK_HELPER = """
import os, select, signal
def in_child(check):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            code = check()
        except BaseException as e:
            print("child raised", type(e).__name__, e, flush=True)
            code = 90
        os._exit(code)
    os.close(w)
    ready, _, _ = select.select([r], [], [], 60)
    os.close(r)
    if not ready:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return 124
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
"""


def test_import_discovers_no_device_so_a_forked_worker_may_use_opencl() -> None:
    if not _opencl_usable():
        pytest.skip("no usable OpenCL device here")
    r = _run(_FORK_HELPER + """
import numpy as np
import accel
def worker():
    import accel.opencl
    buf = accel.empty(4096, device="opencl:0")
    src = np.arange(1024, dtype=np.float32)
    buf.copy_(src)
    out = np.zeros_like(src)
    buf.copy_to(out)
    return 0 if np.array_equal(src, out) else 3
print("child", in_child(worker))
""", unset=("ACCEL_PLUGINS", "ACCEL_PLUGIN_PATH"))
    assert r.returncode == 0, r.stderr
    assert "child 0" in r.stdout, (r.stdout, r.stderr)


def test_a_worker_forked_after_discovery_is_refused_not_hung() -> None:
    if not _opencl_usable():
        pytest.skip("no usable OpenCL device here")
    r = _run(_FORK_HELPER + """
import accel, accel.opencl
assert accel.opencl.device_count() > 0   # discovery in the parent
def worker():
    try:
        accel.empty(4096, device="opencl:0")
    except accel.DeviceError as e:
        return 0 if "'opencl' was initialised before fork()" in str(e) else 4
    return 5
print("child", in_child(worker))
# The parent goes on using it.
buf = accel.empty(4096, device="opencl:0")
print("parent ok")
""")
    assert r.returncode == 0, r.stderr
    assert "child 0" in r.stdout and "parent ok" in r.stdout, (r.stdout, r.stderr)


def _expect_reason(env: Dict[str, str], words: str) -> None:
    """`import accel` and accel.opencl's availability, then `accel info`: both
    finish, and say `words`."""
    r = _run("""
import accel, accel.opencl as o
a = o.availability()
print("count", a["device_count"], "reason", a["reason"])
""", env_extra=env)
    assert r.returncode == 0, r.stderr
    assert "count 0" in r.stdout and words in r.stdout, (r.stdout, r.stderr)
    tool = os.environ.get("ACCEL_TEST_TOOL")
    if tool:
        env_all = dict(os.environ)
        env_all.update(env)
        # The tool's plugins sit beside libaccel, as the build and an install
        # lay them out; named explicitly (the tests' environment turns
        # autoload's directories off).
        plugin = os.path.join(os.path.dirname(tool), os.pardir, "lib", "libaccel_opencl.so")
        args = [tool, "info"] + (["--plugin", plugin] if os.path.exists(plugin) else [])
        try:
            info = subprocess.run(args, env=env_all, capture_output=True,
                                  text=True, timeout=_BOUND_S)
        except subprocess.TimeoutExpired:
            pytest.fail("accel info hung")
        assert info.returncode in (0, 1), info.stderr
        assert words in info.stdout + info.stderr, (info.stdout, info.stderr)


def test_a_fifo_vendor_file_is_reported_not_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "broken.icd")
    _expect_reason({"OCL_ICD_VENDORS": str(tmp_path)}, "FIFO")


def _truncated_library(tmp_path: Path) -> Path:
    real = accel._C.__file__
    data = open(real, "rb").read()
    cut = tmp_path / "libtruncated.so"
    cut.write_bytes(data[: min(len(data) // 4, 65536)])
    return cut


def test_a_truncated_driver_is_reported_not_loaded(tmp_path: Path) -> None:
    vendors = tmp_path / "vendors"
    vendors.mkdir()
    lib = _truncated_library(tmp_path)
    (vendors / "cut.icd").write_text(str(lib) + "\n")
    _expect_reason({"OCL_ICD_VENDORS": str(vendors)}, "truncated")


def test_a_bad_accel_opencl_library_is_reported(tmp_path: Path) -> None:
    lib = _truncated_library(tmp_path)
    _expect_reason({"ACCEL_OPENCL_LIBRARY": str(lib)}, "truncated")
    fifo = tmp_path / "fifo.so"
    os.mkfifo(fifo)
    _expect_reason({"ACCEL_OPENCL_LIBRARY": str(fifo)}, "FIFO")
    _expect_reason({"ACCEL_OPENCL_LIBRARY": str(tmp_path / "missing.so")}, "not found")


def test_a_backend_module_imported_first_in_a_fork_child_is_the_refusing_stand_in() -> None:
    """The OpenCL plugin loaded and discovered in the parent: in the child,
    `import accel.opencl` finds the core's stand-in in the slot and takes it
    (a second registration would be refused as a duplicate), and using the
    backend raises the fork's DeviceError."""
    plugin = os.path.join(accel._C._default_plugin_directories()[0], "libaccel_opencl.so")
    if not os.path.exists(plugin) or not _opencl_usable():
        pytest.skip("no OpenCL plugin or device here")
    r = _run(_FORK_HELPER + f"""
import accel
accel.load_backend({plugin!r})   # its device check discovers in the parent
def worker():
    import accel.opencl
    try:
        accel.empty(16, device="opencl:0")
    except accel.DeviceError as e:
        return 0 if "'opencl' was initialised before fork()" in str(e) else 4
    return 5
print("child", in_child(worker))
""")
    assert r.returncode == 0, r.stderr
    assert "child 0" in r.stdout, (r.stdout, r.stderr)


def test_a_worker_forked_after_init_may_reseed_with_accel_manual_seed() -> None:
    """As Context::manualSeed skips a backend the child cannot use, so does
    accel.manual_seed: a forked worker reseeds (as DataLoader workers do)
    without the fork's DeviceError."""
    r = _run(_FORK_HELPER + """
import accel
accel.empty(16, device="openreg:0")   # openreg initialised in the parent
def worker():
    accel.manual_seed(1234)
    return 0
print("child", in_child(worker))
""")
    assert r.returncode == 0, r.stderr
    assert "child 0" in r.stdout, (r.stdout, r.stderr)


def test_no_accelerator_in_a_fork_child_says_the_backends_were_started_before_the_fork() -> None:
    """Every usable backend was started in the parent: the child has no
    current accelerator, and the error says why instead of only listing the
    registered backends."""
    r = _run(_FORK_HELPER + """
import accel
for name in accel.registered_backends():
    accel.backend(name).device_count()   # discovery in the parent
def worker():
    try:
        accel.empty(16, pinned=True)
    except accel.NotAvailableError as e:
        print("child message:", e, flush=True)
        return 0 if "were started before fork()" in str(e) else 4
    return 5
print("child", in_child(worker))
""")
    assert r.returncode == 0, r.stderr
    assert "child 0" in r.stdout, (r.stdout, r.stderr)

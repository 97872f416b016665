"""Which accelerator is current when several backends are registered
(Context::currentAccelerator, docs/design-notes.md): by name, not by
registration order, the simulated openreg last, ACCEL_ACCELERATOR first; and
current_stream()'s fast path answers as its pybind11 function does."""

import threading
from typing import Any

import pytest

from conftest import RunPython
import accel


def test_a_real_backend_comes_before_the_simulated_openreg(run_python: RunPython) -> None:
    # openreg registers at import, opencl after it: the order is by name and
    # puts the simulator last, whatever registered first. In a fresh process:
    # this one stays on openreg.
    out = run_python("""
        import accel
        print(accel.current_accelerator())
        try:
            import accel.opencl
        except ImportError:
            raise SystemExit("skip: accel built without the OpenCL backend")
        if not accel.opencl.is_available():
            raise SystemExit("skip: no usable OpenCL device: "
                             + accel.opencl.availability()["reason"])
        print(accel.current_accelerator())
        print(accel.current_stream().device.type)
    """, env={"ACCEL_ACCELERATOR": ""})
    if out.stderr.startswith("skip: "):
        pytest.skip(out.stderr[len("skip: "):].strip())
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["openreg", "opencl", "opencl"]


def test_accel_accelerator_names_the_current_accelerator(run_python: RunPython) -> None:
    out = run_python("""
        import accel
        try:
            import accel.opencl
        except ImportError:
            pass
        print(accel.current_accelerator(), accel.current_stream().device.type)
        accel.set_current_accelerator("openreg")   # code still overrides it
        print(accel.current_accelerator())
    """, env={"ACCEL_ACCELERATOR": "openreg"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["openreg", "openreg", "openreg"]


def test_accel_accelerator_naming_no_registered_backend_is_ignored(run_python: RunPython) -> None:
    out = run_python("""
        import accel
        print(accel.current_accelerator())
    """, env={"ACCEL_ACCELERATOR": "vpu_not_loaded"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["openreg"]


def test_current_stream_is_one_object_per_stream_whatever_the_argument() -> None:
    accel.openreg.init()
    first = accel.current_stream()
    assert accel.current_stream() is first
    assert accel.openreg.current_stream() is first
    assert accel.openreg.current_stream(0) is first
    assert accel.openreg.current_stream(None) is first
    assert accel.openreg.current_stream("openreg:0") is first
    assert accel.openreg.current_stream(device=0) is first
    assert accel.current_stream(0) is first
    other = accel.openreg.Stream(0)
    with other:
        assert accel.current_stream() == other
        assert accel.openreg.current_stream() is accel.current_stream()
    assert accel.current_stream() is first


def test_current_stream_follows_the_thread_and_device() -> None:
    accel.openreg.init()
    mine = accel.openreg.Stream(1)
    seen = {}

    def worker() -> None:
        seen["worker"] = accel.openreg.current_stream(1)

    accel.set_stream(mine)
    try:
        assert accel.current_stream() == mine
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert seen["worker"] == accel.openreg.default_stream(1)
        assert accel.openreg.current_stream(0) == accel.openreg.default_stream(0)
    finally:
        accel.set_stream(accel.openreg.default_stream(1))
        accel.openreg.set_device(0)


def test_current_stream_errors_are_the_pybind11_functions() -> None:
    accel.openreg.init()
    with pytest.raises(accel.InvalidArgumentError, match="out of range"):
        accel.openreg.current_stream(99)
    with pytest.raises(accel.InvalidArgumentError, match="out of range"):
        accel.openreg.current_stream(-5)
    with pytest.raises(TypeError):
        accel.openreg.current_stream([])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        accel.openreg.current_stream(0, 1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        accel.current_stream(nodevice=0)  # type: ignore[call-arg]
    function: Any = accel.openreg.current_stream  # a pybind11 function: named, documented
    assert function.__name__ == "current_stream"
    assert function.__doc__.startswith("current_stream(device")

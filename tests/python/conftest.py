"""Shared fixtures of the accel pytest suite (run by ctest, tests/python/CMakeLists.txt)."""

import os
import subprocess
import sys
import textwrap
from typing import Dict, Iterator, Optional, Protocol

import pytest


class RunPython(Protocol):
    """The run_python fixture: runs `code` in a fresh interpreter."""

    def __call__(self, code: str, env: Optional[Dict[str, str]] = None,
                 timeout: float = 120) -> "subprocess.CompletedProcess[str]": ...


@pytest.fixture
def run_python() -> RunPython:
    """Runs a snippet in a fresh interpreter (fresh process: nothing initialised)
    with the same PYTHONPATH; returns the CompletedProcess."""

    def run(code: str, env: Optional[Dict[str, str]] = None,
            timeout: float = 120) -> "subprocess.CompletedProcess[str]":
        full_env = dict(os.environ)
        full_env.update(env or {})
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env,
                              capture_output=True, text=True, timeout=timeout)

    return run


@pytest.fixture(autouse=True)
def _restore_devices() -> Iterator[None]:
    """Each test starts and ends on openreg:0 with no faults injected."""
    import accel
    accel.openreg.set_device(0)
    yield
    accel.openreg.clear_faults()
    accel.openreg.set_device(0)

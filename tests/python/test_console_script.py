"""The `accel` console script of the wheel (setup.py's entry point
accel._tool:main) runs the C++ tool that the wheel carries next to the
module, with the user's arguments, and says what to do when the package was
built without it. Building the wheel itself is slow: CI does that
(.ci/pip_install.sh: pip install . into a venv, then `venv/bin/accel info`)."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

import accel

TOOL = os.environ.get("ACCEL_TEST_TOOL", "")
RUN_MAIN = "import sys; from accel._tool import main; sys.argv[0] = 'accel'; main()"


def _package_copy(tmp_path: Path, tool: Optional[str] = None) -> Path:
    """A package `accel` holding the real _tool.py and, if given, `tool` as
    the executable `accel` beside it (where the wheel puts the C++ tool)."""
    package = tmp_path / "accel"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shutil.copy(Path(accel.__file__).parent / "_tool.py", package / "_tool.py")
    if tool:
        (package / "accel").symlink_to(tool)
    return package


def _run(package: Path, *args: str) -> "subprocess.CompletedProcess[str]":
    env = dict(os.environ, PYTHONPATH=str(package.parent))
    return subprocess.run([sys.executable, "-c", RUN_MAIN, *args], env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not TOOL, reason="the accel tool is not built (ACCEL_TEST_TOOL unset): "
                    "it needs libgtest-dev, libcli11-dev and nlohmann-json3-dev")
def test_console_script_runs_the_packaged_tool_with_the_arguments(tmp_path: Path) -> None:
    out = _run(_package_copy(tmp_path, TOOL), "info", "--json")
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    assert "backends" in info and "autoload" in info


@pytest.mark.skipif(not TOOL, reason="the accel tool is not built (ACCEL_TEST_TOOL unset)")
def test_console_script_passes_the_tools_exit_status_on(tmp_path: Path) -> None:
    out = _run(_package_copy(tmp_path, TOOL), "no-such-subcommand")
    assert out.returncode != 0
    assert "no-such-subcommand" in out.stdout + out.stderr


def test_console_script_without_the_tool_says_how_to_get_it(tmp_path: Path) -> None:
    out = _run(_package_copy(tmp_path))
    assert out.returncode == 1
    assert "no command-line tool" in out.stderr
    assert "libcli11-dev" in out.stderr and "reinstall" in out.stderr

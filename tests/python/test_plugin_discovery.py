"""`import accel` finds the backends `accel info` finds: both run the core's
discovery rule (accel::discoverPlugins, docs/plugins.md): the environment's
autoload, then, with ACCEL_PLUGIN_PATH unset, the directory holding
libaccel.so. Checked in the build tree and in an installed layout (a prefix
whose lib/ holds libaccel and a plugin), against the tool itself."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

import accel

TOOL = os.environ.get("ACCEL_TEST_TOOL", "")
TESTDEV = os.environ.get("ACCEL_TEST_TESTDEV_PLUGIN", "")

PROBE = """
import json, accel
print(json.dumps({
    "backends": {name: accel.backend(name).is_built() for name in accel.registered_backends()},
    "current": accel._C._current_accelerator(),
    "directories": accel._C._default_plugin_directories(),
}))
"""


def _discovery_env(**extra: str) -> Dict[str, str]:
    """The test environment without the suite's ACCEL_PLUGIN_PATH= (which
    turns discovery's directory scan off), plus `extra`."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ACCEL_PLUGIN_PATH", "ACCEL_PLUGINS", "ACCEL_AUTOLOAD",
                        "ACCEL_ACCELERATOR")}
    env.update(extra)
    return env


def _python(env: Dict[str, str]) -> Dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    found: Dict[str, Any] = json.loads(out.stdout)
    return found


def _tool(tool: str, env: Dict[str, str]) -> Dict[str, Any]:
    out = subprocess.run([tool, "info", "--json"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout)
    return {
        "backends": {b["name"]: b["built"] for b in info["backends"]},
        "current": info["current_accelerator"],
        "directories": info["autoload"]["default_directories"],
    }


def _core_library() -> str:
    """The libaccel.so.N file the build's accel._C loads."""
    (directory,) = accel._C._default_plugin_directories()
    names = sorted(n for n in os.listdir(directory)
                   if n.startswith("libaccel.so.") and not os.path.islink(os.path.join(directory, n)))
    assert names, directory
    return os.path.join(directory, names[0])


@pytest.mark.skipif(not TOOL, reason="ACCEL_TEST_TOOL (the accel tool) is not set")
def test_build_tree_python_and_accel_info_find_the_same_backends() -> None:
    env = _discovery_env()
    python, tool = _python(env), _tool(TOOL, env)
    assert python == tool
    # The bundled backends are found as plugins in the build's lib/.
    assert {"openreg"} <= set(python["backends"])
    assert python["directories"] == [os.path.dirname(_core_library())]


@pytest.mark.skipif(not TOOL, reason="ACCEL_TEST_TOOL (the accel tool) is not set")
def test_plugins_found_next_to_libaccel_are_not_said_to_come_from_accel_plugin_path() -> None:
    env = _discovery_env()
    out = subprocess.run([TOOL, "info", "--json"], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    sources = {p["path"]: p["source"] for p in json.loads(out.stdout)["plugins"]}
    assert sources, out.stdout
    assert set(sources.values()) == {"libaccel's directory"}, sources
    text = subprocess.run([TOOL, "info"], env=env, capture_output=True, text=True, timeout=120)
    assert "(ACCEL_PLUGIN_PATH)" not in text.stdout, text.stdout


@pytest.mark.skipif(not TESTDEV or not TOOL,
                    reason="needs the testdev plugin and the accel tool (built with the C++ tests)")
def test_installed_layout_finds_a_plugin_installed_next_to_libaccel(tmp_path: Path) -> None:
    # prefix/lib: libaccel (by its soname), the bundled backends' plugins
    # and a vendor's, as `cmake --install` lays them out; prefix/bin/accel.
    # The build's binaries find this libaccel first through LD_LIBRARY_PATH
    # (their RUNPATH comes after it).
    lib = tmp_path / "lib"
    bin_dir = tmp_path / "bin"
    lib.mkdir()
    bin_dir.mkdir()
    core = _core_library()
    shutil.copy2(core, lib / os.path.basename(core).rsplit(".", 2)[0])  # libaccel.so.0
    for bundled in ("libaccel_openreg.so", "libaccel_opencl.so"):
        if os.path.exists(os.path.join(os.path.dirname(core), bundled)):
            shutil.copy2(os.path.join(os.path.dirname(core), bundled), lib / bundled)
    shutil.copy2(TESTDEV, lib / os.path.basename(TESTDEV))
    shutil.copy2(TOOL, bin_dir / "accel")
    env = _discovery_env(LD_LIBRARY_PATH=str(lib))
    python = _python(env)
    tool = _tool(str(bin_dir / "accel"), env)
    assert python["directories"] == [str(lib)]
    assert python == tool
    record = accel.load_backend(TESTDEV)  # in this process: the plugin's type name
    (type_name,) = record["registered"]
    assert python["backends"][type_name] is True
    # The plugin that was not installed there is not found.
    assert "cuda" not in python["backends"] or python["backends"]["cuda"] is False


@pytest.mark.skipif(not TESTDEV, reason="the testdev plugin is built with the C++ tests")
@pytest.mark.parametrize("setting", [{"ACCEL_PLUGIN_PATH": ""}, {"ACCEL_AUTOLOAD": "0"}])
def test_the_directory_scan_is_off_with_accel_plugin_path_or_autoload_off(
        tmp_path: Path, setting: Dict[str, str]) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    core = _core_library()
    shutil.copy2(core, lib / os.path.basename(core).rsplit(".", 2)[0])
    shutil.copy2(TESTDEV, lib / os.path.basename(TESTDEV))
    found = _python(_discovery_env(LD_LIBRARY_PATH=str(lib), **setting))
    assert found["directories"] == [str(lib)]  # where it would have looked
    record = accel.load_backend(TESTDEV)
    (type_name,) = record["registered"]
    assert type_name not in found["backends"]


@pytest.mark.skipif(not TESTDEV, reason="the testdev plugin is built with the C++ tests")
def test_truncated_plugin_next_to_libaccel_is_skipped_and_import_survives(tmp_path: Path) -> None:
    # A plugin cut after its headers, in the directory `import accel` scans by
    # default, killed the interpreter with SIGBUS inside dlopen.
    lib = tmp_path / "lib"
    lib.mkdir()
    core = _core_library()
    shutil.copy2(core, lib / os.path.basename(core).rsplit(".", 2)[0])
    shutil.copy2(TESTDEV, lib / os.path.basename(TESTDEV))
    with open(TESTDEV, "rb") as plugin:
        (lib / "libaccel_cut.so").write_bytes(plugin.read(4096))
    probe = """
import accel
for r in accel.plugin_report():
    if r["source"] != "accel_core_load_entry":  # openreg, linked
        print(r["path"].rsplit("/", 1)[1], r["status"].replace(" ", "_"))
"""
    out = subprocess.run([sys.executable, "-c", probe],
                         env=_discovery_env(LD_LIBRARY_PATH=str(lib)),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    statuses = dict(line.split() for line in out.stdout.splitlines())
    assert statuses["libaccel_cut.so"] == "open_failed"
    assert statuses[os.path.basename(TESTDEV)] == "loaded"
    assert "libaccel_cut.so: open failed: the file is truncated or damaged" in out.stderr

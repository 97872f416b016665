"""Plugins: load by path, the report, autoload and ACCEL_AUTOLOAD=0.

openreg, which accel links, registers through its plugin entry
(accel_core_load_entry) when accel is imported; the report lists it with that
source, and the tests about files loaded as plugins leave it out."""

import json
import os
import re
from pathlib import Path

import pytest

from conftest import RunPython
import accel

TESTDEV = os.environ.get("ACCEL_TEST_TESTDEV_PLUGIN", "")
NOT_A_PLUGIN = os.environ.get("ACCEL_TEST_NOT_A_PLUGIN", "")
OPENREG = os.environ.get("ACCEL_TEST_OPENREG_PLUGIN", "")
MINIMAL_C = os.environ.get("ACCEL_TEST_MINIMAL_C_PLUGIN", "")
MINIMAL_CFUTURE = os.environ.get("ACCEL_TEST_MINIMAL_CFUTURE_PLUGIN", "")


def _abi_version(offset: int = 0) -> str:
    """The plugin API version of accel/plugin_abi.h (minor plus `offset`), "1.1"."""
    header = os.path.join(os.path.dirname(__file__), "..", "..", "include", "accel",
                          "plugin_abi.h")
    with open(header) as text:
        source = text.read()
    major = re.search(r"#define ACCEL_PLUGIN_ABI_MAJOR (\d+)", source)
    minor = re.search(r"#define ACCEL_PLUGIN_ABI_MINOR (\d+)", source)
    assert major and minor, header
    return f"{major.group(1)}.{int(minor.group(1)) + offset}"


@pytest.mark.skipif(not TESTDEV, reason="the testdev plugin is built with the C++ tests")
def test_load_backend_by_path_and_use_it() -> None:
    record = accel.load_backend(TESTDEV)
    assert record["ok"] and record["status"] == "loaded"
    (type_name,) = record["registered"]
    assert type_name in accel.registered_backends()
    module = accel.backend(type_name)
    assert module.device_count() >= 1
    module.manual_seed(5)
    assert module.initial_seed() == 5
    report = accel.plugin_report()
    assert any(r["path"] == record["path"] and r["ok"] for r in report)


def test_load_backend_failure_is_not_available_error(tmp_path: Path) -> None:
    missing = tmp_path / "libaccel_missing.so"
    with pytest.raises(accel.NotAvailableError) as info:
        accel.load_backend(str(missing))
    assert str(missing) in str(info.value)
    assert any(r["path"] == str(missing) and not r["ok"] for r in accel.plugin_report())


def test_autoload_disabled(run_python: RunPython) -> None:
    result = run_python("""
        import accel
        print(len([r for r in accel.plugin_report() if r["source"] != "accel_core_load_entry"]), accel.openreg.device_count())
        print(accel.autoload_state())
    """, env={"ACCEL_AUTOLOAD": "0", "ACCEL_PLUGINS": "/nonexistent/libaccel_x.so"})
    assert result.returncode == 0, result.stderr
    counts, state = result.stdout.strip().split("\n")
    assert counts == "0 2"
    assert state.startswith("disabled")


@pytest.mark.skipif(not TESTDEV, reason="the testdev plugin is built with the C++ tests")
def test_autoload_from_accel_plugins(run_python: RunPython) -> None:
    result = run_python("""
        import accel
        (record,) = [r for r in accel.plugin_report() if r["source"] != "accel_core_load_entry"]
        print(accel.autoload_state().split()[0], record["source"], record["ok"], record["registered"][0] in accel.registered_backends())
    """, env={"ACCEL_PLUGINS": TESTDEV})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ran", "ACCEL_PLUGINS", "True", "True"]


@pytest.mark.skipif(not OPENREG, reason="openreg is not built")
def test_autoloaded_openreg_plugin_is_the_bundled_backend(run_python: RunPython) -> None:
    result = run_python("""
        import accel
        print([r["status"] for r in accel.plugin_report()], accel.openreg.device_count())
    """, env={"ACCEL_PLUGINS": OPENREG})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['loaded'] 2"


@pytest.mark.skipif(not OPENREG, reason="openreg is not built")
def test_truncated_plugin_in_the_autoload_path_is_skipped_not_fatal(
        run_python: RunPython, tmp_path: Path) -> None:
    # A plugin cut after its headers killed `import accel` with SIGBUS in dlopen.
    with open(OPENREG, "rb") as plugin:
        head = plugin.read(4096)
    cut = tmp_path / "libaccel_cut.so"
    cut.write_bytes(head)
    os.chmod(tmp_path, 0o755)
    result = run_python("""
        import accel
        (record,) = [r for r in accel.plugin_report() if r["path"].endswith("libaccel_cut.so")]
        print(record["ok"], record["status"])
    """, env={"ACCEL_PLUGIN_PATH": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "open", "failed"]
    assert "truncated or damaged" in result.stderr


@pytest.mark.skipif(not MINIMAL_C, reason="the C test plugin is built with the tool's tests")
def test_record_of_a_c_plugin_has_its_api_range_and_the_version_agreed(
        run_python: RunPython) -> None:
    result = run_python("""
        import json, accel
        record = accel.load_backend(%r)
        print(json.dumps([record["status"], record["registered"], record["abi"],
                          "plugin_api_version" in record]))
        print(json.dumps([r["abi"] for r in accel.plugin_report() if r["path"] == record["path"]]))
    """ % MINIMAL_C, env={"ACCEL_AUTOLOAD": "0"})
    assert result.returncode == 0, result.stderr
    loaded, reported = (json.loads(line) for line in result.stdout.strip().split("\n"))
    current = _abi_version()
    abi = {"newest": current, "oldest": "1.0", "negotiated": current}
    # No C++ plugin API number any more: the record has only the C one.
    assert loaded == ["loaded", ["minimalc"], abi, False]
    assert reported == [abi]


@pytest.mark.skipif(not MINIMAL_CFUTURE, reason="the C test plugin is built with the tool's tests")
def test_record_of_a_refused_c_plugin_names_both_ranges_and_no_agreed_version(
        run_python: RunPython) -> None:
    result = run_python("""
        import json, accel
        try:
            accel.load_backend(%r)
        except accel.NotAvailableError as e:
            print("refused:", e)
        (record,) = [r for r in accel.plugin_report() if r["source"] != "accel_core_load_entry"]
        print(json.dumps([record["status"], record["abi"], record["detail"]]))
    """ % MINIMAL_CFUTURE, env={"ACCEL_AUTOLOAD": "0"})
    assert result.returncode == 0, result.stderr
    refused, recorded = result.stdout.strip().split("\n")
    status, abi, detail = json.loads(recorded)
    future = _abi_version(1)
    assert status == "version mismatch"
    assert abi == {"newest": future, "oldest": future, "negotiated": None}
    for text in (refused, detail):
        assert f"speaks plugin API {future} to {future}" in text
        assert f"speaks plugin API 1.0 to {_abi_version()}" in text


@pytest.mark.skipif(not NOT_A_PLUGIN, reason="the plugin tests' plugins are built with the C++ tests")
def test_record_of_a_file_that_is_not_a_plugin_has_no_abi(run_python: RunPython) -> None:
    result = run_python("""
        import json, accel
        try:
            accel.load_backend(%r)
        except accel.NotAvailableError as e:
            print("refused:", "accel_plugin_negotiate" in str(e))
        (record,) = [r for r in accel.plugin_report() if r["source"] != "accel_core_load_entry"]
        print(json.dumps([record["status"], record["abi"], record["registered"]]))
    """ % NOT_A_PLUGIN, env={"ACCEL_AUTOLOAD": "0"})
    assert result.returncode == 0, result.stderr
    refused, recorded = result.stdout.strip().split("\n")
    assert refused == "refused: True"
    assert json.loads(recorded) == ["not a plugin", None, []]

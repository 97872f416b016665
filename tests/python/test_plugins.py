"""Plugins: load by path, the report, autoload and ACCEL_AUTOLOAD=0."""

import os

import pytest

import accel

TESTDEV = os.environ.get("ACCEL_TEST_TESTDEV_PLUGIN")
OPENREG = os.environ.get("ACCEL_TEST_OPENREG_PLUGIN")


@pytest.mark.skipif(not TESTDEV, reason="the testdev plugin is built with the C++ tests")
def test_load_backend_by_path_and_use_it():
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


def test_load_backend_failure_is_not_available_error(tmp_path):
    missing = tmp_path / "libaccel_missing.so"
    with pytest.raises(accel.NotAvailableError) as info:
        accel.load_backend(str(missing))
    assert str(missing) in str(info.value)
    assert any(r["path"] == str(missing) and not r["ok"] for r in accel.plugin_report())


def test_autoload_disabled(run_python):
    result = run_python("""
        import accel
        print(len(accel.plugin_report()), accel.openreg.device_count())
        print(accel.autoload_state())
    """, env={"ACCEL_AUTOLOAD": "0", "ACCEL_PLUGINS": "/nonexistent/libaccel_x.so"})
    assert result.returncode == 0, result.stderr
    counts, state = result.stdout.strip().split("\n")
    assert counts == "0 2"
    assert state.startswith("disabled")


@pytest.mark.skipif(not TESTDEV, reason="the testdev plugin is built with the C++ tests")
def test_autoload_from_accel_plugins(run_python):
    result = run_python("""
        import accel
        (record,) = accel.plugin_report()
        print(accel.autoload_state().split()[0], record["source"], record["ok"], record["registered"][0] in accel.registered_backends())
    """, env={"ACCEL_PLUGINS": TESTDEV})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["ran", "ACCEL_PLUGINS", "True", "True"]


@pytest.mark.skipif(not OPENREG, reason="openreg is not built")
def test_autoloaded_openreg_plugin_is_the_bundled_backend(run_python):
    result = run_python("""
        import accel
        print([r["status"] for r in accel.plugin_report()], accel.openreg.device_count())
    """, env={"ACCEL_PLUGINS": OPENREG})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['loaded'] 2"


@pytest.mark.skipif(not OPENREG, reason="openreg is not built")
def test_truncated_plugin_in_the_autoload_path_is_skipped_not_fatal(run_python, tmp_path):
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

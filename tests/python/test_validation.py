"""accel.validate(): the validation layer from Python (docs/validation.md):
its switch, a violation as ValueError naming the Python line, the leak
report at exit with the allocating line, and ACCEL_VALIDATE."""

import re
from typing import Iterator

from conftest import RunPython
import accel
import pytest


@pytest.fixture(autouse=True)
def _layer_off() -> Iterator[None]:
    accel.openreg.init()
    yield
    accel.validate("off")


def test_validate_turns_the_layer_on_and_off_and_says_the_mode() -> None:
    assert accel.validate() == "off"
    assert accel.validate("throw") == "throw"
    assert accel.validate() == "throw"
    assert accel.validate(True) == "log"
    assert accel.validate(False) == "off"


def test_an_unknown_mode_is_a_value_error_naming_the_modes() -> None:
    with pytest.raises(ValueError, match="'off', 'log', 'throw' or 'abort'"):
        accel.validate("verbose")
    assert accel.validate() == "off"


def test_a_violation_raises_value_error_naming_the_python_line() -> None:
    hooks = accel._C.Hooks("openreg")
    accel.validate("throw")
    buffer = accel.empty(256, device="openreg:0")
    freed = buffer.data_ptr()
    del buffer
    with pytest.raises(ValueError) as raised:
        hooks.device_from_ptr(freed)  # LINE_OF_THE_USE
    message = str(raised.value)
    # The hook as the catalogue names it (a hook's name is written once).
    (hook,) = [n for n, _group, _probe in accel._C._hook_catalogue()
               if n.endswith("DeviceFromPtr")]
    assert re.search(r"accel validation: " + hook + r"\(ptr=0x[0-9a-f]+\) on 'openreg'",
                     message), message
    assert "use after free" in message
    assert re.search(r"called at .*test_validation\.py:\d+ in "
                     r"test_a_violation_raises_value_error_naming_the_python_line", message)
    assert re.search(r"freed at .*test_validation\.py:\d+", message), message


def test_with_the_layer_off_the_same_call_reaches_the_backend() -> None:
    hooks = accel._C.Hooks("openreg")
    buffer = accel.empty(256, device="openreg:0")
    freed = buffer.data_ptr()
    del buffer
    # openreg's own answer for a freed block (the layer would have refused first).
    try:
        hooks.device_from_ptr(freed)
    except ValueError as error:
        assert "accel validation" not in str(error)


def test_leaks_are_listed_at_exit_with_the_allocating_python_line(
        run_python: RunPython) -> None:
    result = run_python("""
        import ctypes
        import accel
        accel.openreg.init()
        kept = accel.empty(4096, device="openreg:1")
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(kept))  # never freed: a leak
    """, env={"ACCEL_VALIDATE": "1"})
    assert result.returncode == 0, result.stderr
    assert "object(s) made while validating were never released" in result.stderr
    assert re.search(r"of 4096 bytes, 'openreg' device 1, made at:\n\s+<string>:5 in <module>",
                     result.stderr), result.stderr


def test_accel_validate_throw_at_start_up(run_python: RunPython) -> None:
    result = run_python("""
        import accel
        accel.openreg.init()
        print(accel.validate())
    """, env={"ACCEL_VALIDATE": "throw"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "throw"


def test_a_malformed_accel_validate_is_named_and_changes_nothing_else(
        run_python: RunPython) -> None:
    result = run_python("""
        import accel
        accel.openreg.init()
        buffer = accel.empty(64, device="openreg:0")
        print(accel.validate(), buffer.nbytes)
    """, env={"ACCEL_VALIDATE": "yes please"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "off 64"
    assert ("ACCEL_VALIDATE='yes please' is not a validation mode; it accepts 0 "
            "(or empty: off), 1 or log, throw, abort") in result.stderr

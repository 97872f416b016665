"""accel.set_device_index and accel.device_index answer an int index in C++
and every other argument through their Python definition: both paths keep
torch.accelerator's rules and the package's errors, and the native guard
class holds no references it does not release."""

import sys
import threading

from conftest import RunPython
import accel
import pytest


def test_set_device_index_takes_an_int_text_a_device_and_the_keyword() -> None:
    accel.set_device_index(1)
    assert accel.current_device_index() == 1
    accel.set_device_index("openreg:0")
    assert accel.current_device_index() == 0
    accel.set_device_index(accel.Device("openreg:1"))
    assert accel.current_device_index() == 1
    accel.set_device_index(device=0)
    assert accel.current_device_index() == 0


def test_set_device_index_out_of_range_raises_and_changes_nothing() -> None:
    accel.set_device_index(1)
    count = accel.device_count()
    with pytest.raises(accel.InvalidArgumentError, match=str(count)):
        accel.set_device_index(count)
    with pytest.raises(accel.InvalidArgumentError, match="device index"):
        accel.set_device_index(64)
    with pytest.raises(accel.InvalidArgumentError, match="device index"):
        accel.set_device_index(2**70)
    assert accel.current_device_index() == 1


def test_set_device_index_refuses_a_bool_and_a_float() -> None:
    with pytest.raises(accel.InvalidArgumentError, match="bool|True"):
        accel.set_device_index(True)
    with pytest.raises((TypeError, ValueError)):
        accel.set_device_index(1.0)  # type: ignore[arg-type]
    assert accel.current_device_index() == 0


def test_set_device_index_keeps_its_name_and_signature_line() -> None:
    assert accel.set_device_index.__name__ == "set_device_index"
    assert "current device" in (accel.set_device_index.__doc__ or "")


def test_device_index_restores_the_previous_device_also_when_the_block_raises() -> None:
    accel.set_device_index(1)
    with accel.device_index(0):
        assert accel.current_device_index() == 0
        with accel.device_index(1):
            assert accel.current_device_index() == 1
        assert accel.current_device_index() == 0
    assert accel.current_device_index() == 1
    with pytest.raises(KeyError):
        with accel.device_index(0):
            raise KeyError("inside")
    assert accel.current_device_index() == 1


def test_device_index_enter_returns_none_and_exit_never_swallows() -> None:
    guard = accel.device_index(1)
    assert guard.__enter__() is None
    assert guard.__exit__(KeyError, KeyError("x"), None) is None
    assert accel.current_device_index() == 0


def test_device_index_takes_text_a_device_none_and_minus_one() -> None:
    with accel.device_index("openreg:1"):
        assert accel.current_device_index() == 1
    with accel.device_index(device=accel.Device("openreg:1")):
        assert accel.current_device_index() == 1
    with accel.device_index(None):
        assert accel.current_device_index() == 0
    with accel.device_index(-1):
        assert accel.current_device_index() == 0


def test_device_index_of_another_type_is_refused_when_made() -> None:
    with pytest.raises(accel.InvalidArgumentError, match="not a 'openreg' device"):
        accel.device_index("cpu:0")


def test_device_index_out_of_range_raises_on_entry_and_changes_nothing() -> None:
    count = accel.device_count()
    guard = accel.device_index(count)
    with pytest.raises(accel.InvalidArgumentError, match=str(count)):
        with guard:
            pass  # pragma: no cover
    with pytest.raises(accel.InvalidArgumentError, match="device index"):
        with accel.device_index(64):
            pass  # pragma: no cover
    assert accel.current_device_index() == 0


def test_device_index_refuses_a_wrong_call() -> None:
    with pytest.raises(TypeError, match="device_index"):
        accel.device_index()
    with pytest.raises(TypeError, match="device_index"):
        accel.device_index(0, 1)
    with pytest.raises(TypeError, match="device_index"):
        accel.device_index(index=0)


def test_device_index_is_per_thread() -> None:
    seen = []

    def other() -> None:
        seen.append(accel.current_device_index())
        with accel.device_index(1):
            seen.append(accel.current_device_index())
        seen.append(accel.current_device_index())

    with accel.device_index(1):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert accel.current_device_index() == 1
    assert seen == [0, 1, 0]


def test_device_index_objects_release_their_class_and_fallback() -> None:
    # Each object holds a reference to its (heap) class and to the fallback
    # guard it made: a missing release would add one per object.
    def make_and_use(times: int) -> None:
        for _ in range(times):
            with accel.device_index(1):
                pass
            with accel.device_index("openreg:1"):
                pass
            accel.device_index(None)

    make_and_use(1)  # whatever is made once per process is made now
    cls_refs = sys.getrefcount(accel.device_index)
    make_and_use(1000)
    # (The interpreter may keep one more reference of its own, e.g. in a
    # specialised call site; 1000 objects that kept theirs would add 1000.)
    assert sys.getrefcount(accel.device_index) - cls_refs <= 1


def test_without_an_accelerator_both_raise_not_available(run_python: RunPython) -> None:
    result = run_python("""
        import accel
        assert accel.current_accelerator() is None
        for call in (lambda: accel.set_device_index(0), lambda: accel.device_index(0)):
            try:
                call()
            except accel.NotAvailableError as e:
                print("NotAvailableError")
        accel.set_device_index(-1)      # torch's rule: changes nothing, raises nothing
        with accel.device_index(None):  # None changes nothing
            pass
        print("ok")
    """, env={"ACCEL_AUTOLOAD": "0", "ACCEL_OPENREG_DEVICES": "0"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["NotAvailableError", "NotAvailableError", "ok"]

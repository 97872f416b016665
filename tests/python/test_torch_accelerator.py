"""Where accel's names match torch.accelerator / torch.cuda, the behaviour
matches PyTorch 2.x's documentation. Each test names the documented
behaviour it pins down."""

from typing import Any, Dict

from conftest import RunPython
import accel
import pytest


def test_set_stream_also_makes_the_streams_device_current() -> None:
    s = accel.openreg.Stream(1)
    accel.set_stream(s)
    assert accel.current_device_index() == 1
    assert accel.current_stream() == s
    accel.set_stream(accel.openreg.default_stream(1))


def test_backend_set_stream_also_makes_the_streams_device_current() -> None:
    s = accel.openreg.Stream(1)
    accel.openreg.set_stream(s)
    assert accel.openreg.current_device() == 1
    accel.openreg.set_stream(accel.openreg.default_stream(1))


def test_set_device_index_with_a_negative_index_does_nothing() -> None:
    accel.set_device_index(1)
    accel.set_device_index(-1)
    accel.set_device_index(-7)
    assert accel.current_device_index() == 1


def test_current_accelerator_check_available() -> None:
    assert accel.current_accelerator(check_available=False) == accel.Device("openreg")
    assert accel.current_accelerator(check_available=True) == accel.Device("openreg")
    assert accel.current_accelerator() == accel.Device("openreg")


def test_current_accelerator_check_available_is_none_without_a_usable_device(
        run_python: RunPython) -> None:
    result = run_python("""
        import accel
        accel.set_current_accelerator("openreg")
        print(accel.current_accelerator(check_available=True))
    """, env={"ACCEL_OPENREG_DEVICES": "0"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "None"


def test_stream_and_event_without_arguments_use_the_current_accelerator_and_device() -> None:
    accel.set_device_index(1)
    s = accel.Stream()
    assert s.device == accel.Device("openreg:1")
    e = accel.Event()
    e.record(s)
    assert e.device == accel.Device("openreg:1")


def test_stream_and_event_take_device_as_keyword() -> None:
    s = accel.Stream(device="openreg:1")
    assert s.device_index == 1
    e = accel.Event(device="openreg", enable_timing=True)
    e.record(s)
    e.synchronize()
    assert e.device == accel.Device("openreg:1")


def test_stream_priority_follows_torch_lower_number_runs_first_and_clamps() -> None:
    least, greatest = accel.Stream.priority_range()
    hooks_lowest, hooks_greatest = accel.openreg._hooks.stream_priority_range()
    assert (least, greatest) == (0, -(hooks_greatest - hooks_lowest))
    assert greatest < least  # openreg has several levels
    assert accel.Stream().priority == 0
    assert accel.Stream(priority=greatest).priority == greatest
    assert accel.openreg.Stream(priority=-1).priority == -1
    assert accel.Stream(priority=greatest - 10).priority == greatest  # clamped
    assert accel.Stream(priority=5).priority == 0  # clamped
    assert accel.openreg.default_stream().priority == 0


def test_stream_priority_survives_current_stream() -> None:
    s = accel.openreg.Stream(priority=-1)
    with s:
        assert accel.openreg.current_stream().priority == -1


def test_generator_constructor_makes_an_independent_generator() -> None:
    g = accel.Generator("openreg:1")
    assert g.device == accel.Device("openreg:1")
    default = accel.openreg.default_generator(1)
    assert g != default
    g.manual_seed(5)
    default.manual_seed(7)
    assert g.initial_seed() == 5
    accel.set_device_index(0)
    assert accel.Generator().device == accel.Device("openreg:0")


def test_record_event_returns_the_backends_event_class() -> None:
    s = accel.openreg.Stream()
    e = s.record_event()
    assert type(e) is accel.openreg.Event
    e.synchronize()


def test_current_stream_returns_the_same_object_for_the_same_stream() -> None:
    a = accel.current_stream()
    b = accel.current_stream()
    assert a is b
    assert type(a) is accel.openreg.Stream
    assert accel.openreg.current_stream() is a
    s = accel.openreg.Stream()
    with s:
        assert accel.current_stream() == s
        assert accel.openreg.current_stream(0) == s
    assert accel.current_stream() is a


def test_a_cached_stream_entered_by_two_threads_restores_each_threads_own_state() -> None:
    import threading
    s = accel.openreg.current_stream(1)
    other = accel.openreg.Stream(0)
    errors = []
    inside = threading.Barrier(2)

    def worker(start: accel.Stream) -> None:
        try:
            accel.openreg.set_stream(start)
            with s:
                inside.wait(timeout=30)
                assert accel.openreg.current_device() == 1
                inside.wait(timeout=30)
            assert accel.openreg.current_device() == start.device_index
            assert accel.openreg.current_stream(start.device_index) == start
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(st,))
               for st in (other, accel.openreg.default_stream(0))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_memory_stats_and_empty_cache_before_initialisation_do_not_initialise(
        run_python: RunPython) -> None:
    result = run_python("""
        import accel
        assert accel.memory.memory_stats() == {}
        assert accel.memory.memory_allocated() == 0
        accel.memory.empty_cache()
        accel.openreg.empty_cache()
        print(accel.openreg.is_initialized())
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


# ---- type rules: torch.accelerator's functions take the current accelerator's
# devices and streams only, and refuse another type with a ValueError naming
# the expected one ----

def test_a_device_or_stream_of_another_backend_is_a_value_error_naming_the_accelerator(
        run_python: RunPython) -> None:
    result = run_python("""
        import sys
        import accel
        if "accel.opencl._native" not in sys.modules:
            raise SystemExit("skip: accel built without the OpenCL backend")
        import accel.opencl                          # registered, never initialised here
        accel.set_current_accelerator("openreg")
        opencl_stream = accel.Stream(stream_id=0, device_index=0,
                                     device_type=accel._C._device_type_code("opencl"))
        calls = {
            "synchronize": lambda: accel.synchronize("opencl:0"),
            "set_stream": lambda: accel.set_stream(opencl_stream),
            "set_device_index": lambda: accel.set_device_index("opencl:0"),
            "memory_allocated": lambda: accel.memory_allocated("opencl:0"),
            "reset_peak_memory_stats": lambda: accel.reset_peak_memory_stats("opencl:0"),
            "memory_stats": lambda: accel.memory.memory_stats("opencl:0"),
            "current_stream": lambda: accel.current_stream("opencl:0"),
            "get_memory_info": lambda: accel.memory.get_memory_info(accel.Device("opencl:0")),
        }
        for name, call in calls.items():
            try:
                call()
            except ValueError as e:
                assert isinstance(e, accel.InvalidArgumentError), name
                assert "current accelerator 'openreg'" in str(e), (name, str(e))
                assert "accel.opencl." + name in str(e) or name == "get_memory_info", str(e)
            else:
                raise AssertionError(name + " accepted a device of opencl")
        print(accel.current_accelerator(), accel.opencl.is_initialized())
    """, env={"ACCEL_ACCELERATOR": ""})
    if result.stderr.startswith("skip: "):
        pytest.skip(result.stderr[len("skip: "):].strip())
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["openreg", "False"]


def test_set_device_index_of_cpu_says_cpu_is_not_an_accelerator() -> None:
    with pytest.raises(ValueError, match="cpu is not an accelerator") as info:
        accel.set_device_index("cpu")
    assert "libaccel_cpu" not in str(info.value) and "::" not in str(info.value)
    assert accel.current_device_index() == 0


def test_an_event_made_for_a_device_records_only_on_that_devices_streams() -> None:
    e = accel.Event(device="openreg:1")
    assert e.device == accel.Device("openreg:1")
    with pytest.raises(ValueError, match="belongs to openreg:1 but the stream is on openreg:0"):
        e.record(accel.openreg.Stream(0))
    assert e.device == accel.Device("openreg:1")  # not moved
    e.record(accel.openreg.Stream(1))
    e.synchronize()
    assert e.device == accel.Device("openreg:1")
    untied = accel.Event(device="openreg")  # no index: the first record decides
    untied.record(accel.openreg.Stream(0))
    assert untied.device == accel.Device("openreg:0")


# ---- init rules ----

def test_synchronize_and_the_reset_functions_before_init_do_nothing_and_initialise_nothing(
        run_python: RunPython) -> None:
    result = run_python("""
        import accel
        accel.synchronize()
        accel.synchronize(1)
        accel.memory.reset_peak_memory_stats()
        accel.memory.reset_accumulated_memory_stats("openreg:1")
        accel.memory.reset_peak_memory_stats(0)
        accel.openreg.reset_peak_memory_stats()
        accel.openreg.reset_accumulated_memory_stats()
        for call in (lambda: accel.synchronize(7), lambda: accel.memory.reset_peak_memory_stats(7),
                     lambda: accel.openreg.reset_accumulated_memory_stats(7)):
            try:
                call()
            except accel.InvalidArgumentError as e:
                assert "out of range" in str(e), str(e)
            else:
                raise AssertionError("index 7 accepted")
        print(accel.openreg.is_initialized())
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_is_available_counts_the_devices(run_python: RunPython) -> None:
    result = run_python("""
        import accel
        print(accel.current_accelerator(), accel.device_count(), accel.is_available())
    """, env={"ACCEL_OPENREG_DEVICES": "0", "ACCEL_ACCELERATOR": "openreg"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["openreg", "0", "False"]
    assert accel.is_available() and accel.device_count() > 0


@pytest.mark.parametrize("initialise_first", [False, True])
def test_seeds_set_before_init_apply_in_the_order_they_were_set(run_python: RunPython,
                                                              initialise_first: bool) -> None:
    result = run_python(f"""
        import accel
        if {initialise_first}:
            accel.openreg.init()
        accel.openreg.manual_seed(42)
        accel.manual_seed(7)
        print(accel.openreg.initial_seed(), accel.openreg.default_generator(1).initial_seed())
        accel.manual_seed(5)
        accel.openreg.manual_seed(9)
        print(accel.openreg.initial_seed(), accel.openreg.default_generator(1).initial_seed())
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["7", "7", "9", "5"]


# ---- names ----

def test_every_backend_module_is_an_attribute_of_accel_without_registering_at_import(
        run_python: RunPython) -> None:
    result = run_python("""
        import sys
        import accel
        assert "accel.opencl" not in sys.modules
        assert "opencl" not in accel.registered_backends()
        assert not hasattr(accel, "no_such_backend")
        if "accel.opencl._native" in sys.modules:
            assert accel.opencl is sys.modules["accel.opencl"]
            # An attribute, but not in __all__: a star import must not register it.
            assert "opencl" not in accel.__all__
        assert accel.openreg is accel.backend("openreg") and accel.cuda is accel.backend("cuda")
        print("ok")
    """, env={"ACCEL_ACCELERATOR": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_a_loaded_plugins_backend_module_is_an_attribute_of_accel(run_python: RunPython) -> None:
    import os
    plugin = os.environ.get("ACCEL_TEST_TESTDEV_PLUGIN")
    if not plugin:
        pytest.skip("the conformance suite's test plugin is built with the C++ tests")
    result = run_python(f"""
        import accel
        (name,) = accel.load_backend({plugin!r})["registered"]
        assert getattr(accel, name) is accel.backend(name)
        print("ok")
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_the_memory_functions_and_old_names_of_torch_accelerator_are_at_the_top_level() -> None:
    for name in ("memory_stats", "memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved", "reset_peak_memory_stats",
                 "reset_accumulated_memory_stats", "empty_cache", "get_memory_info",
                 "memory_stats_as_nested_dict"):
        assert getattr(accel, name) is getattr(accel.memory, name), name
    assert accel.current_device_idx is accel.current_device_index
    assert accel.set_device_idx is accel.set_device_index
    accel.set_device_idx(1)
    assert accel.current_device_idx() == 1


def test_memory_stats_as_nested_dict_nests_the_flat_keys() -> None:
    buf = accel.empty(4096, device="openreg:0")
    flat = accel.memory_stats()
    for nested in (accel.memory_stats_as_nested_dict(),
                   accel.openreg.memory_stats_as_nested_dict(0)):
        assert nested["allocated_bytes"]["all"]["current"] == flat["allocated_bytes.all.current"]
        assert nested["num_ooms"] == flat["num_ooms"]
        leaves = []

        def walk(d: Dict[str, Any]) -> None:
            for v in d.values():
                walk(v) if isinstance(v, dict) else leaves.append(v)
        walk(nested)
        assert len(leaves) == len(flat)
    del buf


def test_record_memory_history_takes_torchs_older_bool() -> None:
    accel.openreg.init()
    accel.memory._record_memory_history(True)
    try:
        buf = accel.empty(4096, device="openreg:0")
        assert any(e["action"] == "alloc" and e["addr"] == buf.data_ptr()
                   for e in accel.memory._snapshot()["device_traces"][0])
    finally:
        accel.memory._record_memory_history(False)
    assert accel.memory._snapshot()["device_traces"][0] == []


def test_a_star_import_registers_no_backend_and_keeps_the_current_accelerator(
        run_python: RunPython) -> None:
    # `from accel import *` walks __all__: a backend module listed there that
    # registers its hooks when imported (accel.opencl) would change which
    # backend is current, as importing accel never does.
    result = run_python("""
        import accel
        before = (accel.registered_backends(), accel.current_accelerator())
        from accel import *  # noqa: F401,F403
        print(before == (accel.registered_backends(), accel.current_accelerator()))
    """, env={"ACCEL_PLUGINS": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True", result.stdout


def test_numpy_integers_and_bools_are_accepted_where_an_int_or_a_bool_is() -> None:
    np = pytest.importorskip("numpy")
    buffer = accel.empty(np.int64(16), "openreg:0")
    assert buffer.nbytes == 16
    stream = accel.Stream(priority=np.int32(0))
    assert stream.priority == 0
    event = accel.Event(enable_timing=np.bool_(True))
    event.record()
    event.synchronize()

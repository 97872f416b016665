"""Where accel's names match torch.accelerator / torch.cuda, the behaviour
matches PyTorch 2.x's documentation. Each test names the documented
behaviour it pins down."""

import accel
import pytest


def test_set_stream_also_makes_the_streams_device_current():
    s = accel.openreg.Stream(1)
    accel.set_stream(s)
    assert accel.current_device_index() == 1
    assert accel.current_stream() == s
    accel.set_stream(accel.openreg.default_stream(1))


def test_backend_set_stream_also_makes_the_streams_device_current():
    s = accel.openreg.Stream(1)
    accel.openreg.set_stream(s)
    assert accel.openreg.current_device() == 1
    accel.openreg.set_stream(accel.openreg.default_stream(1))


def test_set_device_index_with_a_negative_index_does_nothing():
    accel.set_device_index(1)
    accel.set_device_index(-1)
    accel.set_device_index(-7)
    assert accel.current_device_index() == 1


def test_current_accelerator_check_available():
    assert accel.current_accelerator(check_available=False) == accel.Device("openreg")
    assert accel.current_accelerator(check_available=True) == accel.Device("openreg")
    assert accel.current_accelerator() == accel.Device("openreg")


def test_current_accelerator_check_available_is_none_without_a_usable_device(run_python):
    result = run_python("""
        import accel
        accel.set_current_accelerator("openreg")
        print(accel.current_accelerator(check_available=True))
    """, env={"ACCEL_OPENREG_DEVICES": "0"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "None"


def test_stream_and_event_without_arguments_use_the_current_accelerator_and_device():
    accel.set_device_index(1)
    s = accel.Stream()
    assert s.device == accel.Device("openreg:1")
    e = accel.Event()
    e.record(s)
    assert e.device == accel.Device("openreg:1")


def test_stream_and_event_take_device_as_keyword():
    s = accel.Stream(device="openreg:1")
    assert s.device_index == 1
    e = accel.Event(device="openreg", enable_timing=True)
    e.record(s)
    e.synchronize()
    assert e.device == accel.Device("openreg:1")


def test_stream_priority_follows_torch_lower_number_runs_first_and_clamps():
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


def test_stream_priority_survives_current_stream():
    s = accel.openreg.Stream(priority=-1)
    with s:
        assert accel.openreg.current_stream().priority == -1


def test_generator_constructor_makes_an_independent_generator():
    g = accel.Generator("openreg:1")
    assert g.device == accel.Device("openreg:1")
    default = accel.openreg.default_generator(1)
    assert g != default
    g.manual_seed(5)
    default.manual_seed(7)
    assert g.initial_seed() == 5
    accel.set_device_index(0)
    assert accel.Generator().device == accel.Device("openreg:0")


def test_record_event_returns_the_backends_event_class():
    s = accel.openreg.Stream()
    e = s.record_event()
    assert type(e) is accel.openreg.Event
    e.synchronize()


def test_current_stream_returns_the_same_object_for_the_same_stream():
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


def test_a_cached_stream_entered_by_two_threads_restores_each_threads_own_state():
    import threading
    s = accel.openreg.current_stream(1)
    other = accel.openreg.Stream(0)
    errors = []
    inside = threading.Barrier(2)

    def worker(start):
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


def test_memory_stats_and_empty_cache_before_initialisation_do_not_initialise(run_python):
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

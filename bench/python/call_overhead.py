"""Python call overhead of accel's hot calls, against a no-op pybind11 call
(accel._C._noop) measured in the same run, and against Debian torch's
comparable CPU calls where one exists.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python/call_overhead.py

Prints the median ns per call over --repeats timing runs, and each probe's
ratio to the no-op. Targets: probes within 1.5x of the no-op;
current_stream() <= 0.25 us and memory_stats() <= 5 us.

The device-agnostic rows (accel.current_stream, accel.memory.memory_stats)
measure openreg: ACCEL_ACCELERATOR defaults to openreg here, since plugin
discovery may also register opencl (pocl) and cuda from the build's lib/,
and opencl would otherwise be the current accelerator (docs/design-notes.md).
"""

import argparse
import os
import statistics
import timeit

os.environ.setdefault("ACCEL_ACCELERATOR", "openreg")

import accel  # noqa: E402
from accel import _C  # noqa: E402


def median_ns(stmt, number, repeats):
    runs = timeit.repeat(stmt, number=number, repeat=repeats)
    return statistics.median(runs) / number * 1e9


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--number", type=int, default=200000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    accel.openreg.init()
    stream = accel.openreg.Stream(0)
    generator = accel.openreg.default_generator(0)
    event = accel.openreg.Event()
    event.record(stream)
    stream.synchronize()
    current_device = accel.openreg.current_device
    cases = [
        ("_C._noop() [baseline]", _C._noop, True),
        ("accel.openreg.current_device()", current_device, True),
        ("accel.openreg.is_available()", accel.openreg.is_available, True),
        ("accel.openreg.device_count()", accel.openreg.device_count, True),
        ("stream.query()", stream.query, True),
        ("event.query()", event.query, True),
        ("accel.current_stream()", accel.current_stream, False),
        ("accel.openreg.current_stream()", accel.openreg.current_stream, False),
        ("accel.memory.memory_stats()", accel.memory.memory_stats, False),
        ("accel.openreg.memory_stats()", accel.openreg.memory_stats, False),
        ("generator.manual_seed(42)", lambda: generator.manual_seed(42), False),
        ("accel.openreg.manual_seed(42)", lambda: accel.openreg.manual_seed(42), False),
        ("accel.openreg.get_rng_state()", accel.openreg.get_rng_state, False),
        ("accel.empty(0)", lambda: accel.empty(0), False),
        ("accel.empty(4096, device='openreg:0')",
         lambda: accel.empty(4096, device="openreg:0"), False),
    ]
    try:
        import torch
        cases += [
            ("torch.manual_seed(42) [peer]", lambda: torch.manual_seed(42), False),
            ("torch.get_rng_state() [peer]", torch.get_rng_state, False),
            ("torch.cuda.is_available() [peer]", torch.cuda.is_available, False),
            ("torch.empty(0) [peer]", lambda: torch.empty(0), False),
        ]
    except ImportError:
        print("torch not importable: no peer rows")

    results = {}
    for name, fn, _ in cases:
        slow = "empty(4096" in name or "memory_stats" in name
        number = args.number if not slow else args.number // 10
        results[name] = median_ns(fn, number, args.repeats)
    baseline = results["_C._noop() [baseline]"]
    print(f"{'call':44s} {'median ns':>10s} {'x no-op':>8s}")
    for name, _, probe in cases:
        ns = results[name]
        mark = "  (probe)" if probe and "baseline" not in name else ""
        print(f"{name:44s} {ns:10.1f} {ns / baseline:8.2f}{mark}")


if __name__ == "__main__":
    main()

"""Python call overhead of accel's hot calls, against a no-op pybind11 call
(accel._C._noop) measured in the same run, and against Debian torch's
comparable CPU calls where one exists.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python/call_overhead.py

Each row times the statement as a user writes it (timeit over the text, so
no row pays for a lambda the others do not) and prints the median ns per
statement over --repeats timing runs and its ratio to the no-op. Targets:
probes within 1.5x of the no-op; accel.set_device_index(0) and
`with accel.device_index(0): pass` within 3x; current_stream() <= 0.25 us
and memory_stats() <= 5 us.

The OpenCL rows (when pocl or another OpenCL device is present) compare
Stream.query() with a raw clGetEventInfo round trip made from Python through
ctypes on the same driver: the status of a completed marker on another queue
of the device, read into a prepared c_int. Target: query() within 2x of it,
on an idle stream (its last command complete) and on a busy one (waiting for
an event of a stream held by a user event: each query asks the driver). The
rows of streams whose queue was handed out (native_queue) show the marker
query the backend falls back to (docs/opencl.md, "Stream queries"), which
every query made before: on an idle queue it waits for pocl's worker to
complete the marker. ctypes' own call cost is most of the raw row: the
difference between the busy and the idle query rows is what the
clGetEventInfo itself costs.

The device-agnostic rows (accel.current_stream, accel.memory.memory_stats,
set_device_index, device_index) measure openreg: ACCEL_ACCELERATOR defaults
to openreg here, since plugin discovery may also register opencl (pocl) and
cuda from the build's lib/, and opencl would otherwise be the current
accelerator (docs/design-notes.md).
"""

import argparse
import ctypes
import os
import statistics
import timeit

os.environ.setdefault("ACCEL_ACCELERATOR", "openreg")

import accel  # noqa: E402
from accel import _C  # noqa: E402

CL_EVENT_COMMAND_EXECUTION_STATUS = 0x11D3
CL_COMPLETE = 0


def median_ns(stmt, namespace, number, repeats):
    runs = timeit.repeat(stmt, globals=namespace, number=number, repeat=repeats)
    return statistics.median(runs) / number * 1e9


class OpenClRows:
    """The OpenCL rows' objects: an idle stream, a busy one, one whose queue
    was handed out, and a raw clGetEventInfo call through ctypes."""

    def __init__(self):
        cl = ctypes.CDLL("libOpenCL.so.1")
        void_p = ctypes.c_void_p
        cl.clEnqueueMarkerWithWaitList.argtypes = [void_p, ctypes.c_uint, void_p,
                                                   ctypes.POINTER(void_p)]
        cl.clEnqueueBarrierWithWaitList.argtypes = [void_p, ctypes.c_uint,
                                                    ctypes.POINTER(void_p), void_p]
        cl.clCreateUserEvent.argtypes = [void_p, ctypes.POINTER(ctypes.c_int)]
        cl.clCreateUserEvent.restype = void_p
        cl.clSetUserEventStatus.argtypes = [void_p, ctypes.c_int]
        cl.clFinish.argtypes = [void_p]
        cl.clFlush.argtypes = [void_p]
        cl.clReleaseEvent.argtypes = [void_p]
        cl.clGetEventInfo.argtypes = [void_p, ctypes.c_uint, ctypes.c_size_t, void_p, void_p]
        cl.clGetEventInfo.restype = ctypes.c_int
        self.cl = cl

        accel.opencl.init()
        # Idle: work done on it, its last command seen complete.
        self.idle = accel.opencl.Stream(0)
        buffer = accel.empty(4096, device="opencl:0")
        buffer.copy_(bytes(4096))
        self.idle.synchronize()
        # The raw round trip: a completed marker on a queue of its own.
        self.raw_stream = accel.opencl.Stream(0)
        queue = void_p(accel.opencl.native_queue(self.raw_stream))
        self.marker = void_p()
        assert cl.clEnqueueMarkerWithWaitList(queue, 0, None, ctypes.byref(self.marker)) == 0
        cl.clFinish(queue)
        self.status = ctypes.c_int(-1)
        self.status_ref = ctypes.byref(self.status)
        self.raw = cl.clGetEventInfo
        assert self.raw_round_trip() == 0 and self.status.value == CL_COMPLETE
        # Busy: waits for an event of a stream held by a user event.
        self.held = accel.opencl.Stream(0)
        held_queue = void_p(accel.opencl.native_queue(self.held))
        error = ctypes.c_int(0)
        context = void_p(accel.opencl.native_handles(0)["context"])
        self.gate = void_p(cl.clCreateUserEvent(context, ctypes.byref(error)))
        assert error.value == 0
        assert cl.clEnqueueBarrierWithWaitList(held_queue, 1, ctypes.byref(self.gate),
                                               None) == 0
        cl.clFlush(held_queue)
        event = accel.opencl.Event()
        event.record(self.held)
        self.busy = accel.opencl.Stream(0)
        self.busy.wait_event(event)
        assert self.busy.query() is False and self.idle.query() is True

    def raw_round_trip(self):
        return self.raw(self.marker, CL_EVENT_COMMAND_EXECUTION_STATUS, 4, self.status_ref,
                        None)

    def release(self):
        self.cl.clSetUserEventStatus(self.gate, CL_COMPLETE)
        self.busy.synchronize()
        self.held.synchronize()
        self.cl.clReleaseEvent(self.gate)
        self.cl.clReleaseEvent(self.marker)


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
    ns = {"accel": accel, "_C": _C, "stream": stream, "event": event,
          "generator": generator}
    # (name, statement, kind): kind "probe" (target 1.5x), "cheap" (3x), "" (none).
    cases = [
        ("_C._noop() [baseline]", "_C._noop()", ""),
        ("accel.openreg.current_device()", "accel.openreg.current_device()", "probe"),
        ("accel.openreg.is_available()", "accel.openreg.is_available()", "probe"),
        ("accel.openreg.device_count()", "accel.openreg.device_count()", "probe"),
        ("stream.query()", "stream.query()", "probe"),
        ("event.query()", "event.query()", "probe"),
        ("accel.set_device_index(0)", "accel.set_device_index(0)", "cheap"),
        ("with accel.device_index(0): pass", "with accel.device_index(0): pass", "cheap"),
        ("accel.current_stream()", "accel.current_stream()", ""),
        ("accel.openreg.current_stream()", "accel.openreg.current_stream()", ""),
        ("accel.memory.memory_stats()", "accel.memory.memory_stats()", ""),
        ("accel.openreg.memory_stats()", "accel.openreg.memory_stats()", ""),
        ("generator.manual_seed(42)", "generator.manual_seed(42)", ""),
        ("accel.openreg.manual_seed(42)", "accel.openreg.manual_seed(42)", ""),
        ("accel.openreg.get_rng_state()", "accel.openreg.get_rng_state()", ""),
        ("accel.empty(0)", "accel.empty(0)", ""),
        ("accel.empty(4096, device='openreg:0')", "accel.empty(4096, device='openreg:0')", ""),
    ]
    try:
        import torch
        ns["torch"] = torch
        cases += [
            ("torch.manual_seed(42) [peer]", "torch.manual_seed(42)", ""),
            ("torch.get_rng_state() [peer]", "torch.get_rng_state()", ""),
            ("torch.cuda.is_available() [peer]", "torch.cuda.is_available()", ""),
            ("torch.empty(0) [peer]", "torch.empty(0)", ""),
        ]
    except ImportError:
        print("torch not importable: no peer rows")
    opencl = None
    if getattr(accel, "opencl", None) is not None and accel.opencl.is_available():
        opencl = OpenClRows()
        ns["cl"] = opencl
        cases += [
            ("clGetEventInfo via ctypes [opencl raw]", "cl.raw_round_trip()", ""),
            ("stream.query() [opencl, idle]", "cl.idle.query()", "raw"),
            ("stream.query() [opencl, busy]", "cl.busy.query()", "raw"),
            ("stream.query() [opencl, handed out, idle: marker]", "cl.raw_stream.query()", ""),
            ("stream.query() [opencl, handed out, busy: marker]", "cl.held.query()", ""),
        ]
    else:
        print("no OpenCL device: no opencl rows")

    results = {}
    for name, stmt, _ in cases:
        number = args.number
        if "empty(4096" in name or "memory_stats" in name:
            number //= 10
        if "marker" in name:
            number //= 100
        results[name] = median_ns(stmt, ns, number, args.repeats)
    if opencl is not None:
        opencl.release()
    baseline = results["_C._noop() [baseline]"]
    raw = results.get("clGetEventInfo via ctypes [opencl raw]")
    print(f"{'statement':50s} {'median ns':>10s} {'x no-op':>8s}  target")
    for name, _, kind in cases:
        value = results[name]
        target = {"probe": "<= 1.5x no-op", "cheap": "<= 3x no-op"}.get(kind, "")
        if kind == "raw":
            target = f"<= 2x raw ({value / raw:.2f}x)"
        print(f"{name:50s} {value:10.1f} {value / baseline:8.2f}  {target}")


if __name__ == "__main__":
    main()

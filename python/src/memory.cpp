// The memory methods of accel._C.Hooks: statistics with torch's key names,
// history recording (with Python stacks) and snapshots in torch's dict form.
#include <Python.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "accel/context.h"
#include "accel/memory/snapshot_json.h"
#include "accel/memory_stats.h"
#include "bindings.h"
#include "int_args.h"
#include "typed_object.h"

namespace accel::python {
namespace {

// Every figure under PyTorch's flattened key names
// ("allocated_bytes.all.current", ...), sorted by key as torch returns them.
// The keys are made once (interned, hashes cached); a call converts only the
// values that changed: memory_stats() is polled in training loops. One
// maker per process serves every backend and device: a poll of another
// device just changes more values.
class StatsDictMaker {
 public:
  StatsDictMaker() {
    const std::vector<std::string>& names = MemoryStats::flatNames();
    order_.resize(names.size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    std::sort(order_.begin(), order_.end(),
              [&](std::size_t a, std::size_t b) { return names[a] < names[b]; });
    for (std::size_t i : order_) {
      PyObject* key = PyUnicode_InternFromString(names[i].c_str());
      if (key == nullptr) throw py::error_already_set();
      keys_.push_back(py::reinterpret_steal<py::object>(key));
    }
  }

  // A copy of the last result with the figures that changed since replaced:
  // copying a dict clones its table in one go, while inserting ~120 keys
  // one by one costs ~50 ns each (6 us a call; the goal is 5).
  py::dict make(const MemoryStats& stats) {
    stats.flatValues(values_);
    if (!last_) {
      last_ = py::reinterpret_steal<py::object>(
          _PyDict_NewPresized(static_cast<Py_ssize_t>(keys_.size())));
      if (!last_) throw py::error_already_set();
      last_values_.assign(values_.size(), 0);
      for (std::size_t k = 0; k < order_.size(); ++k) set(k, values_[order_[k]]);
    } else {
      for (std::size_t k = 0; k < order_.size(); ++k) {
        const std::int64_t value = values_[order_[k]];
        if (value != last_values_[k]) set(k, value);
      }
    }
    PyObject* copy = PyDict_Copy(last_.ptr());
    if (copy == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::dict>(copy);
  }

 private:
  std::vector<std::size_t> order_;  // k-th key in sorted order = flatNames()[order_[k]]
  std::vector<py::object> keys_;
  std::vector<std::int64_t> values_;  // reused: the GIL serialises calls
  py::object last_;  // a dict never handed out, keys in sorted order; null at first
  std::vector<std::int64_t> last_values_;

  void set(std::size_t k, std::int64_t value) {
    py::object number = py::reinterpret_steal<py::object>(
        PyLong_FromLongLong(static_cast<long long>(value)));
    if (!number || PyDict_SetItem(last_.ptr(), keys_[k].ptr(), number.ptr()) != 0)
      throw py::error_already_set();
    last_values_[k] = value;
  }
};

py::dict statsDict(const MemoryStats& stats) {
  static auto* maker = new StatsDictMaker();  // leaked: holds Python objects
  return maker->make(stats);
}

py::list framesList(const std::vector<MemoryFrame>& frames) {
  py::list out;
  for (const MemoryFrame& frame : frames) {
    py::dict f;
    f["filename"] = frame.filename;
    f["line"] = frame.line;
    f["name"] = frame.name;
    out.append(f);
  }
  return out;
}

// The dictionary torch.cuda.memory._snapshot() returns (PyTorch 2.x), key for
// key, so that its memory viewer reads a pickle of it. Allocated blocks with
// frames also carry PyTorch 1.13's "history" ([{"addr", "real_size",
// "frames"}]), which 1.13's torch.cuda._memory_viz reads and 2.x ignores.
py::dict snapshotDict(const MemorySnapshot& snapshot) {
  py::list segments;
  for (const MemorySegment& segment : snapshot.segments) {
    py::list blocks;
    for (const MemoryBlock& block : segment.blocks) {
      py::dict b;
      b["address"] = block.address;
      b["size"] = block.size;
      b["requested_size"] = block.requested_size;
      b["state"] = memory::blockStateName(block.state);
      py::list frames = framesList(block.frames);
      b["frames"] = frames;
      if (block.state != MemoryBlock::State::Free && !block.frames.empty()) {
        py::dict h;
        h["addr"] = block.address;
        h["real_size"] = block.requested_size;
        h["frames"] = frames;
        py::list history;
        history.append(h);
        b["history"] = history;
      }
      blocks.append(b);
    }
    py::dict s;
    s["device"] = int(segment.device.index());
    s["address"] = segment.address;
    s["total_size"] = segment.total_size;
    s["allocated_size"] = segment.allocated_size;
    s["active_size"] = segment.active_size;
    s["requested_size"] = segment.requested_size;
    s["stream"] = segment.stream.id;
    s["segment_type"] = segment.is_large ? "large" : "small";
    s["segment_pool_id"] = py::make_tuple(segment.pool.first, segment.pool.second);
    s["is_expandable"] = segment.is_expandable;
    s["frames"] = py::list();
    s["blocks"] = blocks;
    segments.append(s);
  }
  py::list traces;
  for (const auto& device_trace : snapshot.device_traces) {
    py::list trace;
    for (const MemoryTraceEntry& entry : device_trace) {
      py::dict e;
      e["action"] = memory::traceActionName(entry.action);
      e["addr"] = entry.address;
      e["size"] = entry.size;
      e["stream"] = entry.stream.id;
      e["time_us"] = entry.time_ns / 1000;
      e["frames"] = framesList(entry.frame_details);
      if (entry.action == MemoryTraceEntry::Action::Oom)
        e["device_free"] = entry.device_free;
      trace.append(e);
    }
    traces.append(trace);
  }
  py::dict out;
  out["segments"] = segments;
  out["device_traces"] = traces;
  return out;
}

// torch's `enabled`: None (off), "state" (live blocks' stacks, no trace) or
// "all" (the trace too).
HistoryRecording recordingFromName(const std::optional<std::string>& enabled) {
  if (!enabled) return HistoryRecording::Off;
  if (*enabled == "all") return HistoryRecording::All;
  if (*enabled == "state") return HistoryRecording::State;
  throw InvalidArgument("_record_memory_history(enabled='" + *enabled +
                        "'): use None (off), 'state' or 'all'");
}

}  // namespace

void bindMemory(py::module_& m) {
  // memory_stats of one backend module and of accel.memory, in C++: the
  // Python layers around a 3 us call doubled it. Before the backend is
  // initialised: {} (torch.cuda's answer), and it stays uninitialised.
  m.def(
      "_memory_stats_function",
      [](const std::string& type_name)
          -> Typed<"Callable[[Union[None, int, str, Device]], Dict[str, int]]"> {
        const DeviceType type = typeFromName(type_name);
        return py::cpp_function(
            [type](const py::handle& device) -> py::dict {
              if (!globalContext().isInitialized(type)) return py::dict();
              return statsDict(
                  getHooks(type).memoryStats(indexFor(type, device, "memory_stats")));
            },
            py::name("memory_stats"), py::arg("device") = py::none(),
            py::doc("Allocator statistics of `device` (default: current) with torch's "
                    "flattened keys, sorted; {} before the backend is initialised."));
      },
      py::arg("type"));
  m.def(
      "_accelerator_memory_stats",
      [](const DeviceLike& device) -> Typed<"Dict[str, int]"> {
        const DeviceType type = acceleratorTypeFor(device, "memory_stats");
        if (!globalContext().isInitialized(type)) return py::dict();
        return statsDict(
            getHooks(type).memoryStats(indexFor(type, device, "memory_stats")));
      },
      py::arg("device") = py::none(),
      "accel.memory.memory_stats: the current accelerator's statistics of `device` (an "
      "index, or text / a Device of that accelerator; default: its current device).");

  auto hooks = py::reinterpret_borrow<py::class_<PyHooks>>(m.attr("Hooks"));
  hooks
      .def(
          "memory_stats",
          [](const PyHooks& h, DeviceIndexArg i) -> Typed<"Dict[str, int]"> {
            return statsDict(h.get().memoryStats(i.value));
          },
          py::arg("index") = -1,
          "Allocator statistics as a dict with PyTorch's flattened key names, sorted.")
      .def(
          "reset_peak_memory_stats",
          [](const PyHooks& h, DeviceIndexArg i) {
            h.get().resetPeakMemoryStats(i.value);
          },
          py::arg("index") = -1)
      .def(
          "empty_cache", [](const PyHooks& h) { h.get().emptyCache(); }, Release())
      .def(
          "memory_info",
          [](const PyHooks& h, DeviceIndexArg i) -> Typed<"Tuple[int, int]"> {
            const DeviceIndex index = i.value;
            DeviceMemoryInfo info;
            {
              GilRelease release;  // the driver may create a device context
              info = h.get().getMemoryInfo(index);
            }
            return py::make_tuple(info.free_bytes, info.total_bytes);
          },
          py::arg("index") = -1,
          "(free, total) bytes of the device; what the caching allocator holds counts "
          "as used.")
      .def(
          "reset_accumulated_memory_stats",
          [](const PyHooks& h, DeviceIndexArg i) {
            h.get().resetAccumulatedMemoryStats(i.value);
          },
          py::arg("index") = -1,
          "Sets the cumulative figures (allocated, freed) and event counters to 0.")
      .def(
          "set_memory_fraction",
          [](const PyHooks& h, double fraction, DeviceIndexArg i) {
            h.get().setMemoryFraction(fraction, i.value);
          },
          py::arg("fraction"), py::arg("index") = -1,
          "Caps what the allocator may reserve on the device at fraction x its total "
          "memory (0 <= fraction <= 1).")
      .def(
          "host_memory_stats", [](const PyHooks& h) -> Typed<"Dict[str, int]"> {
            return statsDict(h.get().hostMemoryStats());
          },
          "Statistics of the pinned host memory cache, with memory_stats' flat keys.")
      .def(
          "record_memory_history",
          [](const PyHooks& h, const std::optional<std::string>& enabled,
             IntArg<std::size_t, "max_entries"> max_entries, bool record_stack,
             bool python_stack) {
            MemoryHistoryOptions options;
            options.enabled = recordingFromName(enabled);
            options.max_entries = max_entries.value;
            options.record_stack = record_stack;
            if (python_stack) options.capture_host_stack = &capturePythonStack;
            GilRelease release;
            h.get().recordMemoryHistory(options);
          },
          py::arg("enabled") = "all", py::arg("max_entries") = 100000,
          py::arg("record_stack") = false, py::arg("python_stack") = false,
          "Start or stop recording allocation history: record_stack keeps C++ "
          "frames, python_stack the allocating Python frames (resolved when a "
          "snapshot is taken).")
      .def(
          "memory_snapshot",
          [](const PyHooks& h, DeviceIndexArg device, bool all_devices,
             bool include_trace) -> Typed<"Dict[str, Any]"> {
            MemorySnapshotOptions options;
            options.device = device.value;
            options.all_devices = all_devices;
            options.include_trace = include_trace;
            MemorySnapshot snapshot;
            {
              // Released: resolving Python frames takes the GIL after the
              // allocator's locks are let go.
              GilRelease release;
              snapshot = h.get().memorySnapshot(options);
            }
            return snapshotDict(snapshot);
          },
          py::arg("device") = -1, py::arg("all_devices") = true,
          py::arg("include_trace") = true,
          "The allocator snapshot in torch's snapshot dict form.");
}

}  // namespace accel::python

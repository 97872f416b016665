// accel._C.Stream, Event and Graph: thin objects over the hooks' streams,
// events and graphs groups. Every wait releases the GIL, so that a Python
// thread waiting on one device does not hold up threads using another.
#include <pybind11/stl.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/event.h"
#include "accel/graph.h"
#include "accel/stream.h"
#include "bindings.h"
#include "int_args.h"
#include "typed_object.h"

namespace accel::python {
namespace {

AcceleratorHooks& hooksOf(const Stream& s) noexcept { return getHooks(s.device.type()); }

// A stream and, while it is entered as a context manager, what it replaced,
// per entering thread: current_stream() hands every thread the same cached
// object, so two threads may be inside `with s:` at once. The GIL
// serialises __enter__ and __exit__ (neither releases it).
struct PyStream {
  Stream stream;
  struct Saved {
    std::thread::id thread;
    Stream stream;
    DeviceIndex device;
  };
  std::vector<Saved> saved;

  // The same stream, whatever either object has entered.
  friend bool operator==(const PyStream& a, const PyStream& b) noexcept {
    return a.stream == b.stream;
  }
};

// An event of one device type, created on its first record (when its device
// becomes known, unless it was made for a device with an index, which then
// is its device), destroyed with the object. An interprocess event is created
// at once, on the current device, so that a backend without cross-process
// events refuses it where it is asked for.
struct PyEvent {
  DeviceType type;
  EventFlags flags;
  EventId id = kNoEvent;
  DeviceIndex device = kCurrentDevice;  // kCurrentDevice: the first record decides

  PyEvent(DeviceType t, EventFlags f) : type(t), flags(f) {}
  PyEvent(const PyEvent&) = delete;
  PyEvent& operator=(const PyEvent&) = delete;
  ~PyEvent() {
    if (id != kNoEvent) getHooks(type).destroyEvent(id);  // noexcept
  }
  void require(const char* what) const {
    ACCEL_CHECK(id != kNoEvent, InvalidArgument, "Event.", what,
                ": the event was never recorded; call record() first");
  }
  void record(const Stream& stream) {
    ACCEL_CHECK(stream.device.type() == type, InvalidArgument,
                "Event.record: the event is for '", deviceTypeName(type),
                "' but the stream is on ", stream.device.str());
    AcceleratorHooks& hooks = getHooks(type);
    ACCEL_CHECK(device == kCurrentDevice || stream.device.index() == device,
                InvalidArgument, "Event.record: the event belongs to ",
                Device(type, device).str(), " but the stream is on ", stream.device.str(),
                "; record it on a stream of ", Device(type, device).str(),
                ", or make an Event for ", stream.device.str());
    if (id == kNoEvent) {
      id = hooks.createEvent(stream.device.index(), flags);
      device = stream.device.index();
    }
    hooks.recordEvent(id, stream);
  }
};

struct PyGraph {
  DeviceType type;
  GraphId id;
  explicit PyGraph(DeviceType t, bool keep)
      : type(t), id(getHooks(t).graphCreate(keep)) {}
  PyGraph(const PyGraph&) = delete;
  PyGraph& operator=(const PyGraph&) = delete;
  ~PyGraph() {
    try {
      getHooks(type).graphDestroy(id);
    } catch (...) {  // a destructor must not throw; a poisoned backend refuses
    }
  }
};

// An argument of a Stream or Event method as its C++ object, or, for an
// object of another type, a TypeError with the method's public signature
// (pybind11's own lists its internal overloads and class names). None is
// null where `allow_none`.
template <typename T>
T* argumentAs(const py::handle& value, const char* signature, bool allow_none = false) {
  if (allow_none && value.is_none()) return nullptr;
  if (!py::isinstance<T>(value)) {
    throw py::type_error(
        std::string(signature) + ": got " +
        std::string(py::str(py::type::handle_of(value).attr("__name__"))));
  }
  return &value.cast<T&>();
}

// Python's stream priorities follow torch (and CUDA): 0 is the default and
// lowest, lower numbers run first, priority_range() is (least, greatest) =
// (0, -(levels - 1)), values outside it are clamped. The hooks count the
// other way (streamPriorityRange() = {lowest, greatest}, greater first).
int hooksPriority(AcceleratorHooks& hooks, int python_priority) {
  const auto [lowest, greatest] = hooks.streamPriorityRange();
  const long long wanted = static_cast<long long>(lowest) - python_priority;
  return static_cast<int>(std::clamp<long long>(wanted, lowest, greatest));
}

// The priority each stream was created with, as the hooks have no query for
// it: streams come from per-priority pools, so an id keeps its priority. A
// stream never seen here (default streams, streams C++ code made) has the
// default priority 0.
class StreamPriorities {
 public:
  void remember(const Stream& stream, int priority) {
    std::lock_guard<std::mutex> lock(mutex_);
    priorities_[stream] = priority;
  }
  [[nodiscard]] int of(const Stream& stream) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = priorities_.find(stream);
    return found == priorities_.end() ? 0 : found->second;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<Stream, int> priorities_;
};

StreamPriorities& streamPriorities() {
  static auto* priorities = new StreamPriorities();  // outlives every Stream object
  return *priorities;
}

int pythonPriority(const Stream& stream) {
  const int priority = streamPriorities().of(stream);
  if (priority == 0) return 0;
  return -(priority - getHooks(stream.device.type()).streamPriorityRange().first);
}

Stream newStream(const py::handle& device, int priority) {
  const Device d = toDeviceOrCurrent(device, "Stream");
  ACCEL_CHECK(!d.isCpu(), InvalidArgument,
              "Stream(device='cpu'): streams belong to an accelerator; pass e.g. "
              "'openreg:0' or nothing for the current accelerator");
  lazyInitFromPython(d.type());
  AcceleratorHooks& hooks = getHooks(d.type());
  const int level = hooksPriority(hooks, priority);
  const Stream stream = hooks.getNewStream(d.index(), level);
  if (level != 0) streamPriorities().remember(stream, level);
  return stream;
}

Stream currentStreamOf(DeviceType type) {
  AcceleratorHooks& hooks = getHooks(type);
  return hooks.getCurrentStream(kCurrentDevice);
}

// m.<name>(type, index=-1): the stream `get` answers for device `index` of
// the backend called `type`.
void defStreamOf(py::module_& m, const char* name,
                 Stream (AcceleratorHooks::*get)(DeviceIndex) const) {
  m.def(
      name,
      [get](const std::string& type, DeviceIndexArg index) {
        return PyStream{(getHooks(typeFromName(type)).*get)(index.value), {}};
      },
      py::arg("type"), py::arg("index") = -1);
}

// Polled in loops: one definition for the pybind11 method (its docstring and
// the fallback) and for the fast method that answers the calls (fastMethod).
bool streamQuery(const PyStream& s) { return hooksOf(s.stream).queryStream(s.stream); }
bool eventQuery(const PyEvent& e) {
  return e.id == kNoEvent || getHooks(e.type).queryEvent(e.id);
}
PyObject* fastStreamQuery(void* value) {
  return PyBool_FromLong(streamQuery(*static_cast<const PyStream*>(value)));
}
PyObject* fastEventQuery(void* value) {
  return PyBool_FromLong(eventQuery(*static_cast<const PyEvent*>(value)));
}

}  // namespace

void bindStreams(py::module_& m) {
  // Registered before Stream, whose methods take and return events: pybind11
  // names a class in a signature (and so in the stub) once it is registered.
  py::class_<PyEvent> event_class(
      m, "Event",
      "A marker in a stream. Created on its first record(); elapsed_time "
      "needs enable_timing=True on both events.");
  withEquality(py::class_<PyStream>(
                   m, "Stream",
                   "A queue of work on one device. `with stream:` makes it the current "
                   "stream (and its device the current device) until the block ends."))
      .def(py::init([](const DeviceLike& device, IntArg<int, "priority"> priority) {
             return PyStream{newStream(device, priority.value), {}};
           }),
           py::arg("device") = py::none(), py::arg("priority") = 0,
           "A new stream from the backend's pool on `device` (Device, text or index; "
           "default: the current accelerator's current device). `priority` as in "
           "torch: 0 (default) is the lowest, lower numbers run first, values outside "
           "priority_range() are clamped.")
      .def(py::init([](IntArg<long long, "stream_id"> stream_id,
                       IntArg<long long, "device_index"> device_index,
                       IntArg<long long, "device_type"> device_type) {
             return PyStream{
                 Stream::unpack3(stream_id.value, device_index.value, device_type.value),
                 {}};
           }),
           py::arg("stream_id"), py::arg("device_index"), py::arg("device_type"),
           "The stream with these three integers (see pack3).")
      .def_property_readonly("device", [](const PyStream& s) { return s.stream.device; })
      .def_property_readonly(
          "device_index", [](const PyStream& s) { return int(s.stream.device.index()); })
      .def_property_readonly("device_type",
                             [](const PyStream& s) {
                               return std::string(deviceTypeName(s.stream.device.type()));
                             })
      .def_property_readonly("stream_id", [](const PyStream& s) { return s.stream.id; })
      .def_property_readonly(
          "priority", [](const PyStream& s) { return pythonPriority(s.stream); },
          "The stream's priority in torch's convention (0 = default, lower runs "
          "first).")
      .def_static(
          "priority_range", [](const DeviceLike& device) -> Typed<"Tuple[int, int]"> {
            const Device d = toDeviceOrCurrent(device, "Stream.priority_range");
            const auto [lowest, greatest] = getHooks(d.type()).streamPriorityRange();
            return py::make_tuple(0, -(greatest - lowest));
          },
          py::arg("device") = py::none(),
          "(least, greatest) priority as torch gives it: (0, -N); lower runs first.")
      .def("__reduce__",
           [](const PyStream& s) {
             // By value (stream id, device index, device type), which is what
             // a stream is: meaningful in this process, as torch's pickles are.
             const StreamData3 d = s.stream.pack3();
             return py::make_tuple(
                 py::type::of<PyStream>(),
                 py::make_tuple(d.stream_id, d.device_index, d.device_type));
           })
      .def("query", &streamQuery,
           "True when all work enqueued so far has finished. Never waits.")
      .def(
          "synchronize",
          [](const PyStream& s) { hooksOf(s.stream).synchronizeStream(s.stream); },
          Release(), "Waits for all work enqueued so far (GIL released).")
      .def(
          "wait_event",
          [](const PyStream& s, const Typed<"Event">& event_arg) {
            PyEvent& event =
                *argumentAs<PyEvent>(event_arg, "Stream.wait_event(event: accel.Event)");
            event.require("wait");
            hooksOf(s.stream).blockStream(event.id, s.stream);
          },
          py::arg("event"),
          "Work enqueued on this stream after this call waits for `event`.")
      .def(
          "wait_stream",
          [](const PyStream& s, const Typed<"Stream">& other_arg) {
            const PyStream& other = *argumentAs<PyStream>(
                other_arg, "Stream.wait_stream(stream: accel.Stream)");
            AcceleratorHooks& hooks = hooksOf(other.stream);
            ACCEL_CHECK(other.stream.device.type() == s.stream.device.type(),
                        InvalidArgument, "wait_stream: ", s.stream.device.str(),
                        " cannot wait for a stream on ", other.stream.device.str());
            const EventId event = hooks.createEvent(other.stream.device.index(), {});
            try {
              hooks.recordEvent(event, other.stream);
              hooks.blockStream(event, s.stream);
            } catch (...) {
              hooks.destroyEvent(event);
              throw;
            }
            hooks.destroyEvent(event);
          },
          py::arg("stream"),
          "Work enqueued after this call waits for `stream`'s work so far.")
      .def(
          "record_event",
          [](const PyStream& s, std::optional<PyEvent*> event) -> Typed<"Event"> {
            if (event && *event != nullptr) {
              (*event)->record(s.stream);
              return py::cast(*event, py::return_value_policy::reference);
            }
            auto fresh = std::make_unique<PyEvent>(s.stream.device.type(), EventFlags{});
            fresh->record(s.stream);
            return py::cast(std::move(fresh));
          },
          py::arg("event") = py::none(),
          "Records `event` (a new one if None) and returns it.")
      .def(
          "pack3", [](const PyStream& s) -> Typed<"Tuple[int, int, int]"> {
            const StreamData3 d = s.stream.pack3();
            return py::make_tuple(d.stream_id, d.device_index, d.device_type);
          })
      .def(
          "__enter__",
          [](PyStream& s) -> PyStream& {
            AcceleratorHooks& hooks = hooksOf(s.stream);
            const DeviceIndex previous_device =
                hooks.exchangeDevice(s.stream.device.index());
            try {
              s.saved.push_back({std::this_thread::get_id(),
                                 hooks.exchangeStream(s.stream), previous_device});
            } catch (...) {
              hooks.setCurrentDevice(previous_device);
              throw;
            }
            return s;
          },
          py::return_value_policy::reference)
      .def("__exit__",
           [](PyStream& s, const py::args&) {
             const std::thread::id self = std::this_thread::get_id();
             auto entry =
                 std::find_if(s.saved.rbegin(), s.saved.rend(),
                              [&](const PyStream::Saved& e) { return e.thread == self; });
             ACCEL_CHECK(entry != s.saved.rend(), InvalidArgument,
                         "Stream.__exit__ without __enter__ on this thread");
             const PyStream::Saved saved = *entry;
             s.saved.erase(std::next(entry).base());
             AcceleratorHooks& hooks = hooksOf(s.stream);
             hooks.setCurrentStream(saved.stream);
             hooks.setCurrentDevice(saved.device);
             return false;
           })
      .def("__hash__", [](const PyStream& s) { return std::hash<Stream>{}(s.stream); })
      .def("__repr__", [](const PyStream& s) {
        return "<accel.Stream device=" + s.stream.device.str() +
               " stream_id=" + std::to_string(s.stream.id) + ">";
      });

  defStreamOf(m, "_current_stream", &AcceleratorHooks::getCurrentStream);
  defStreamOf(m, "_default_stream", &AcceleratorHooks::getDefaultStream);
  m.def(
      "_set_stream",
      [](const PyStream& s) {
        getHooks(s.stream.device.type()).setCurrentStream(s.stream);
      },
      py::arg("stream"), "Makes `stream` current for its device on this thread.");

  event_class
      .def(py::init([](const DeviceLike& device, bool enable_timing, bool blocking,
                       bool interprocess) {
             const Device d = toDeviceOrCurrent(device, "Event");
             ACCEL_CHECK(
                 !d.isCpu(), InvalidArgument,
                 "Event(device='cpu'): events belong to an accelerator; pass e.g. "
                 "'openreg' or nothing for the current accelerator");
             lazyInitFromPython(d.type());
             auto event = std::make_unique<PyEvent>(
                 d.type(), EventFlags{enable_timing, blocking, interprocess});
             // A device named with its index is the event's device (a record on
             // another device's stream is refused); None, an index of -1 or a
             // bare type leave it to the first record.
             const bool named_index =
                 PyLong_Check(device.ptr())
                     ? PyLong_AsLong(device.ptr()) >= 0
                     : !device.is_none() && toDevice(device).hasIndex();
             if (named_index) event->device = d.index();
             if (interprocess) {
               AcceleratorHooks& hooks = getHooks(event->type);
               const DeviceIndex device = d.index();
               event->id = hooks.createEvent(device, event->flags);
               event->device = device;
             }
             return event;
           }),
           py::arg("device") = py::none(), py::arg("enable_timing") = false,
           py::arg("blocking") = false, py::arg("interprocess") = false,
           "An event of `device`'s backend (a type name, 'type:N', a Device or an "
           "index; default: the current accelerator), created on its first record.")
      .def("__reduce__", &refusePickle<PyEvent>)
      .def(
          "record",
          [](PyEvent& e, const Typed<"Optional[Stream]">& stream_arg) {
            const PyStream* stream = argumentAs<PyStream>(
                stream_arg, "Event.record(stream: accel.Stream | None = None)", true);
            e.record(stream != nullptr ? stream->stream : currentStreamOf(e.type));
          },
          py::arg("stream") = py::none(),
          "Records the event on `stream` (default: the current stream of the current "
          "device).")
      .def(
          "wait",
          [](PyEvent& e, const Typed<"Optional[Stream]">& stream_arg) {
            const PyStream* stream = argumentAs<PyStream>(
                stream_arg, "Event.wait(stream: accel.Stream | None = None)", true);
            e.require("wait");
            const Stream s = stream != nullptr ? stream->stream : currentStreamOf(e.type);
            getHooks(e.type).blockStream(e.id, s);
          },
          py::arg("stream") = py::none(),
          "Work enqueued on `stream` after this waits for the event.")
      .def("query", &eventQuery,
           "True when the work before the record has finished (True if never recorded).")
      .def(
          "synchronize",
          [](const PyEvent& e) {
            if (e.id != kNoEvent) getHooks(e.type).synchronizeEvent(e.id);
          },
          Release(), "Waits until the event has happened (GIL released).")
      .def(
          "elapsed_time",
          [](const PyEvent& start, const Typed<"Event">& end_arg) {
            const PyEvent& end =
                *argumentAs<PyEvent>(end_arg, "Event.elapsed_time(end: accel.Event)");
            // Said here in Python's words (the hook names its C++ flags).
            ACCEL_CHECK(start.flags.enable_timing && end.flags.enable_timing,
                        InvalidArgument, "Event.elapsed_time: ",
                        start.flags.enable_timing ? "the end event" : "this event",
                        " was created without timing; create both events with "
                        "enable_timing=True (accel.Event(enable_timing=True))");
            start.require("elapsed_time");
            end.require("elapsed_time");
            return getHooks(start.type).elapsedTime(start.id, end.id);
          },
          py::arg("end"),
          "Milliseconds from this event to `end`; both must have completed.")
      .def_property_readonly(
          "device_type",
          [](const PyEvent& e) { return std::string(deviceTypeName(e.type)); },
          "The name of the backend the event belongs to, recorded or not.")
      .def_property_readonly("device",
                             [](const PyEvent& e) -> std::optional<Device> {
                               if (e.device == kCurrentDevice) return std::nullopt;
                               return Device(e.type, e.device);
                             })
      .def("__repr__", [](const PyEvent& e) {
        return "<accel.Event " + std::string(deviceTypeName(e.type)) +
               (e.id == kNoEvent ? " (not recorded)" : " id=" + std::to_string(e.id)) +
               ">";
      });

  py::class_<PyGraph>(m, "Graph",
                      "Work captured from a stream once and replayed many times.")
      .def(py::init([](const std::string& type, bool keep_graph) {
             return std::make_unique<PyGraph>(typeFromName(type), keep_graph);
           }),
           py::arg("device_type"), py::arg("keep_graph") = false)
      .def(
          "capture_begin",
          [](PyGraph& g, std::optional<std::pair<std::uint64_t, std::uint64_t>> pool,
             const std::string& mode) {
            CaptureMode capture = CaptureMode::Global;
            if (mode == "thread_local") {
              capture = CaptureMode::ThreadLocal;
            } else if (mode == "relaxed") {
              capture = CaptureMode::Relaxed;
            } else {
              ACCEL_CHECK(mode == "global", InvalidArgument, "capture_error_mode='", mode,
                          "': use 'global', 'thread_local' or 'relaxed'");
            }
            MempoolId id;
            if (pool) id = MempoolId{pool->first, pool->second};
            getHooks(g.type).graphCaptureBegin(g.id, id, capture);
          },
          py::arg("pool") = py::none(), py::arg("capture_error_mode") = "global",
          "Begins capturing the current stream of the current device.")
      .def("capture_end", [](PyGraph& g) { getHooks(g.type).graphCaptureEnd(g.id); })
      .def("instantiate", [](PyGraph& g) { getHooks(g.type).graphInstantiate(g.id); })
      .def(
          "replay", [](PyGraph& g) { getHooks(g.type).graphReplay(g.id); }, Release())
      .def("reset", [](PyGraph& g) { getHooks(g.type).graphReset(g.id); })
      .def("__reduce__", &refusePickle<PyGraph>)
      .def("pool", [](const PyGraph& g) {
        const MempoolId id = getHooks(g.type).graphPool(g.id);
        return std::make_pair(id.first, id.second);
      });

  fastMethod<&fastStreamQuery>(m.attr("Stream"), "query");
  fastMethod<&fastEventQuery>(m.attr("Event"), "query");
}

}  // namespace accel::python

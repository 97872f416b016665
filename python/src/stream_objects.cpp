// accel's current_stream() and default_stream(): one cached Python object per
// stream, so that the call that code makes most often costs one C++ call and
// a lookup instead of building an object (issue 20's 0.25 us goal). Their
// common case (no argument or an index, backend initialised, object made
// before) is a fastFunction: no pybind11 dispatch, no allocation, no
// exception, no hash lookup when the stream is the one asked last.
#include <optional>
#include <unordered_map>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/stream.h"
#include "bindings.h"
#include "int_args.h"
#include "typed_object.h"

namespace accel::python {
namespace {

// One Python object per stream, of its backend module's Stream class
// (accel.openreg.Stream), so that current_stream() returns a cached object
// instead of building one per call (torch builds one; 1.2 us here). Entries
// live as long as the process: streams come from bounded pools. The GIL
// guards the maps. Leaked on purpose: no Python object may be released after
// the interpreter is gone.
class StreamObjects {
 public:
  void setClass(DeviceType type, py::object cls) { classes_[type] = std::move(cls); }

  // The object of `stream` if it was made before, else null. Borrowed.
  PyObject* find(const Stream& stream) noexcept {
    if (last_object_ != nullptr && stream == last_stream_) [[likely]]
      return last_object_;
    auto found = objects_.find(stream);
    if (found == objects_.end()) return nullptr;
    last_stream_ = stream;
    last_object_ = found->second.ptr();
    return last_object_;
  }

  py::object get(const Stream& stream) {
    auto found = objects_.find(stream);
    if (found != objects_.end()) return found->second;
    py::object object;
    auto cls = classes_.find(stream.device.type());
    if (cls == classes_.end()) {
      // The backend's module registers its class when it is made.
      py::module_::import("accel._backend")
          .attr("backend")(std::string(deviceTypeName(stream.device.type())));
      cls = classes_.find(stream.device.type());
    }
    if (cls != classes_.end()) {
      object = cls->second(int(stream.device.index()), py::arg("stream_id") = stream.id);
    } else {
      const StreamData3 d = stream.pack3();
      object = py::module_::import("accel._C")
                   .attr("Stream")(d.stream_id, d.device_index, d.device_type);
    }
    return objects_.emplace(stream, object).first->second;
  }

 private:
  std::unordered_map<DeviceType, py::object> classes_;
  std::unordered_map<Stream, py::object> objects_;
  // The entry find() returned last (objects are never dropped, so it stays
  // valid): a loop asking for the same stream skips the hash.
  Stream last_stream_{};
  PyObject* last_object_ = nullptr;
};

StreamObjects& streamObjects() {
  static auto* objects = new StreamObjects();
  return *objects;
}

// The device index the fast paths accept without pybind11: none (the
// current device) or a non-negative int in range. False for anything else
// (keywords, text, a Device, a bad index), which the pybind11 function
// handles and reports.
bool fastIndex(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
               DeviceIndex& index) noexcept {
  if (kwnames != nullptr || nargs > 1) return false;
  if (nargs == 0 || args[0] == Py_None) {
    index = kCurrentDevice;
    return true;
  }
  if (!PyLong_CheckExact(args[0])) return false;
  int overflow = 0;
  const long value = PyLong_AsLongAndOverflow(args[0], &overflow);
  if (overflow != 0 || value < 0 || value >= kMaxDevicesPerType) {
    PyErr_Clear();
    return false;
  }
  index = static_cast<DeviceIndex>(value);
  return true;
}

using StreamGetter = Stream (AcceleratorHooks::*)(DeviceIndex) const;

// The cached object of `type`'s stream that `get` names, or null when the
// backend is not initialised through the context yet, the hook throws or the
// object was never made: the pybind11 function then does (and reports) it.
PyObject* cachedStream(DeviceType type, StreamGetter get, DeviceIndex index) noexcept {
  AcceleratorHooks* hooks = detail::g_context_ready[static_cast<std::uint8_t>(type)].load(
      std::memory_order_acquire);
  if (hooks == nullptr) return nullptr;
  try {
    PyObject* object = streamObjects().find((hooks->*get)(index));
    if (object != nullptr) Py_INCREF(object);
    return object;
  } catch (...) {
    return nullptr;
  }
}

struct StreamFunction {
  DeviceType type;
  StreamGetter get;
};

PyObject* fastStream(const void* data, PyObject* const* args, Py_ssize_t nargs,
                     PyObject* kwnames) noexcept {
  const auto* f = static_cast<const StreamFunction*>(data);
  DeviceIndex index = kCurrentDevice;
  if (!fastIndex(args, nargs, kwnames, index)) return nullptr;
  return cachedStream(f->type, f->get, index);
}

PyObject* fastAcceleratorStream(const void*, PyObject* const* args, Py_ssize_t nargs,
                                PyObject* kwnames) noexcept {
  DeviceIndex index = kCurrentDevice;
  if (!fastIndex(args, nargs, kwnames, index)) return nullptr;
  const std::optional<DeviceType> type = globalContext().currentAccelerator();
  if (!type) return nullptr;
  return cachedStream(*type, &AcceleratorHooks::getCurrentStream, index);
}

// The function current_stream / default_stream of one backend: the type is
// bound, the backend initialised on first use, the object cached.
py::object streamFunction(DeviceType type, StreamGetter get, const char* name,
                          const char* doc) {
  py::cpp_function slow(
      [type, get, name](const py::handle& device) {
        if (!globalContext().isInitialized(type)) [[unlikely]]
          lazyInitFromPython(type);
        const Stream stream = (getHooks(type).*get)(indexFor(type, device, name));
        return streamObjects().get(stream);
      },
      py::name(name), py::arg("device") = py::none(), py::doc(doc));
  return fastFunction(&fastStream, new StreamFunction{type, get}, slow);  // leaked
}

}  // namespace

DeviceIndex indexFor(DeviceType type, const py::handle& device, const char* what) {
  if (device.is_none()) return kCurrentDevice;
  if (PyLong_Check(device.ptr()) && !PyBool_Check(device.ptr()))
    return deviceIndexOfInt(device);
  const Device d = toDevice(device);
  ACCEL_CHECK(d.type() == type, InvalidArgument, what, ": device '", d.str(),
              "' is not a '", deviceTypeName(type), "' device; pass an index or '",
              deviceTypeName(type), ":N'");
  return d.hasIndex() ? d.index() : kCurrentDevice;
}

void bindStreamObjects(py::module_& m) {
  m.def(
      "_stream_functions",
      [](const std::string& type_name, const Typed<"Type[Stream]">& cls)
          -> Typed<"Dict[str, Callable[[Union[None, int, str, Device]], Stream]]"> {
        const DeviceType type = typeFromName(type_name);
        streamObjects().setClass(type, cls);
        py::dict out;
        out["current_stream"] = streamFunction(
            type, &AcceleratorHooks::getCurrentStream, "current_stream",
            "This thread's current stream of `device` (default: the current device); "
            "the same object for the same stream.");
        out["default_stream"] =
            streamFunction(type, &AcceleratorHooks::getDefaultStream, "default_stream",
                           "The default stream of `device`.");
        return out;
      },
      py::arg("type"), py::arg("cls"),
      "current_stream and default_stream of one backend, returning cached objects of "
      "`cls`.");
  py::cpp_function accelerator_current_stream(
      [](const DeviceLike& device) -> Typed<"Stream"> {
        const DeviceType type = acceleratorTypeFor(device, "current_stream");
        if (!globalContext().isInitialized(type)) [[unlikely]]
          lazyInitFromPython(type);
        return streamObjects().get(
            getHooks(type).getCurrentStream(indexFor(type, device, "current_stream")));
      },
      py::name("_accelerator_current_stream"), py::arg("device") = py::none(),
      py::doc("accel.current_stream: the current accelerator's current stream of "
              "`device` (an index, or text / a Device of that accelerator)."));
  m.attr("_accelerator_current_stream") =
      fastFunction(&fastAcceleratorStream, nullptr, accelerator_current_stream);
}

}  // namespace accel::python

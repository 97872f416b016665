// accel's current_stream() and default_stream(): one cached Python object per
// stream, so that the call that code makes most often costs one C++ call and
// a hash lookup instead of building an object (issue 20's 0.25 us goal).
#include <unordered_map>

#include "accel/context.h"
#include "accel/error.h"
#include "accel/stream.h"
#include "bindings.h"

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
};

StreamObjects& streamObjects() {
  static auto* objects = new StreamObjects();
  return *objects;
}

// The function current_stream / default_stream of one backend: the type is
// bound, the backend initialised on first use, the object cached.
py::cpp_function streamFunction(DeviceType type,
                                Stream (AcceleratorHooks::*get)(DeviceIndex) const,
                                const char* name, const char* doc) {
  return py::cpp_function(
      [type, get, name](const py::handle& device) {
        if (!globalContext().isInitialized(type)) [[unlikely]]
          lazyInitFromPython(type);
        const Stream stream = (getHooks(type).*get)(indexFor(type, device, name));
        return streamObjects().get(stream);
      },
      py::name(name), py::arg("device") = py::none(), py::doc(doc));
}

}  // namespace

DeviceIndex indexFor(DeviceType type, const py::handle& device, const char* what) {
  if (device.is_none()) return kCurrentDevice;
  if (PyLong_Check(device.ptr()) && !PyBool_Check(device.ptr()))
    return toDeviceIndex(device.cast<long long>());
  const Device d = toDevice(device);
  ACCEL_CHECK(d.type() == type, InvalidArgument, what, ": device '", d.str(),
              "' is not a '", deviceTypeName(type), "' device; pass an index or '",
              deviceTypeName(type), ":N'");
  return d.hasIndex() ? d.index() : kCurrentDevice;
}

void bindStreamObjects(py::module_& m) {
  m.def(
      "_stream_functions",
      [](const std::string& type_name, const py::object& cls) {
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
  m.def(
      "_accelerator_current_stream",
      [](const py::handle& device) {
        DeviceType type;
        if (device.is_none() || PyLong_Check(device.ptr())) {
          type = currentAcceleratorType("current_stream");
        } else {
          type = toDevice(device).type();
        }
        if (!globalContext().isInitialized(type)) [[unlikely]]
          lazyInitFromPython(type);
        return streamObjects().get(
            getHooks(type).getCurrentStream(indexFor(type, device, "current_stream")));
      },
      py::arg("device") = py::none(),
      "accel.current_stream: the current accelerator's (or `device`'s) current stream.");
}

}  // namespace accel::python

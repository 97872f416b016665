// The pieces of accel._C, one function per concept, and the conversions they
// share. module.cpp calls the bind* functions in dependency order.
//
// Conventions of the binding layer (docs/python-internals.md, "The binding"):
//  - device types travel as their names ("openreg"), device indices as Python
//    ints checked here (DeviceIndexArg, int_args.h: -1 or 0 to 63) before the
//    hooks check the count; every integer argument is an IntArg, so that an
//    int out of range names the argument and the range;
//  - every call that may wait (synchronize, copies, initialisation, plugin
//    loading) releases the GIL;
//  - C++ errors become the accel.*Error classes (errors.cpp) with the C++
//    message.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "accel/device.h"
#include "accel/device_type.h"
#include "accel/hooks.h"
#include "accel/hooks_table.h"
#include "accel/memory_stats.h"

namespace accel::python {

namespace py = pybind11;

// accel._C.Hooks: one backend's hooks by device type. Stores only the type
// and looks the hooks up on every call (one atomic load), so that it follows
// a backend registered after it was made.
struct PyHooks {
  DeviceType type;
  [[nodiscard]] AcceleratorHooks& get() const noexcept { return getHooks(type); }
};

// Releases the GIL for a wait, like py::gil_scoped_release, but a thread
// that comes back while the interpreter is finalising (a daemon thread still
// inside a wait at exit) stops there and sleeps until the process ends.
// CPython 3.11 pthread_exits such a thread from PyEval_RestoreThread: a
// forced unwind, which through pybind11's noexcept guard destructor was
// std::terminate, the abort users saw. The destructor may therefore let that
// unwind through (noexcept(false)) for a thread that passed the check just
// before finalisation began; pybind11 rethrows it and the thread ends.
class GilRelease {
 public:
  GilRelease() noexcept : state_(PyEval_SaveThread()) {}
  ~GilRelease() noexcept(false);
  GilRelease(const GilRelease&) = delete;
  GilRelease& operator=(const GilRelease&) = delete;

 private:
  PyThreadState* state_;
};
using Release = py::call_guard<GilRelease>;

void bindErrors(py::module_& m);
void bindObjects(py::module_& m);  // Device, Generator, DeviceProperties
void bindHooks(py::module_& m);    // Hooks, context functions
void bindMemory(py::module_& m);   // Hooks' memory methods: stats, history, snapshots
void bindStreams(py::module_& m);  // Stream, Event, Graph
void bindStreamObjects(py::module_& m);  // cached current/default stream objects
void bindBuffer(py::module_& m);         // Buffer, DLPack, copies, host fills
void bindDeviceFills(py::module_& m);    // fill_uniform, ... (accel/device_fill.h)
void bindPlugins(py::module_& m);
void bindValidation(py::module_& m);        // _validate: the validation layer's switch
void bindHookApi(py::module_& m);           // _hook_catalogue, _python_api_of_hooks
void bindDeviceIndexCalls(py::module_& m);  // set_device_index, device_index
void bindTrace(py::module_& m);             // _trace_*: accel.profiler (accel/trace.h)

// `cls` with __eq__ defined from T's operator==: two objects of the class
// compare as their C++ values do, and an object of any other type compares
// unequal (False, not pybind's TypeError). Define __hash__ after it: pybind
// sets __hash__ to None when __eq__ comes without one.
template <typename T>
py::class_<T> withEquality(py::class_<T> cls) {
  cls.def(
      "__eq__", [](const T& a, const T& b) { return a == b; }, py::is_operator(),
      py::arg("other"));
  cls.def(
      "__eq__", [](const T&, const py::object&) { return false; }, py::is_operator(),
      py::arg("other"));
  return cls;
}

// The registered device type called `name`. Throws InvalidArgument naming the
// registered backends when there is none.
DeviceType typeFromName(std::string_view name);
// The same for a Python object: TypeError for a non-str, InvalidArgument for
// text without a UTF-8 form (a lone surrogate). `what` names the Python call.
DeviceType typeFromName(const py::handle& name, const char* what);

// A Python str as UTF-8. Throws TypeError (py::type_error) for a non-str and
// InvalidArgument for a lone surrogate, naming `what` (the Python call).
std::string toText(const py::handle& text, const char* what);

// Initialises the backend through the package's lazy state (accel._lazy), so
// that the calls queued before initialisation (manual_seed) run. Needs the GIL.
void lazyInitFromPython(DeviceType type);

// The current accelerator; NotAvailable naming `what` and the registered
// backends when there is none.
DeviceType currentAcceleratorType(const char* what);
// The current accelerator, for a device-agnostic call `what` given `device`
// (None, an index, or text / a Device): a device of another type is refused
// with InvalidArgument naming the accelerator and the backend module to use
// (torch.accelerator's rule; accel/accelerator.py says it in the same words).
DeviceType acceleratorTypeFor(const py::handle& device, const char* what);

// Pickling support a binding class refuses: __reduce__ (and through it every
// protocol) raises TypeError saying why, instead of pybind11's default, which
// aborts the interpreter under protocols 0 and 1.
template <typename T>
py::object refusePickle(const T&) {
  throw py::type_error(std::string("cannot pickle '") +
                       py::type::of<T>().attr("__name__").template cast<std::string>() +
                       "': it refers to live device state of this process");
}

// The answer to a call's common case, without pybind11's dispatcher: a new
// reference, or null to hand the call (unchanged; no Python error set) to
// the pybind11 function. Runs with the GIL held; must not throw.
using FastPath = PyObject* (*)(const void* data, PyObject* const* args, Py_ssize_t nargs,
                               PyObject* kwnames) noexcept;
// A function with `slow`'s name, docstring and behaviour whose calls `fast`
// answers first (fast_call.cpp says why). `data` is passed to `fast` and must
// live as long as the process.
py::object fastFunction(FastPath fast, const void* data, const py::object& slow);

// The answer of a method that takes only `self`, from the instance's C++
// object (pybind11's value pointer): a new reference. Runs with the GIL held;
// may throw C++ errors, which pybind11's registered translators turn into
// Python exceptions as they do for the pybind11 method.
using FastMethod = PyObject* (*)(void* value);
// Sets the Python error for the C++ exception being handled, through
// pybind11's registered translators as a binding's error would be. Call only
// inside a catch block; never throws.
void translateCurrentException() noexcept;
PyObject* callFastMethod(PyObject* self, FastMethod fast, PyObject* slow) noexcept;
void installFastMethod(const py::handle& cls, const char* name, PyCFunction method,
                       PyObject** slow);
// Replaces `cls`'s pybind11 method `name` (one taking only self) with a
// METH_NOARGS method that calls `Fast` without pybind11's dispatcher and
// argument conversion (fast_call.cpp says why). An instance whose C++ object
// is not in pybind11's simple layout, or not constructed, goes to the
// pybind11 method; docstring and behaviour are the pybind11 method's.
template <FastMethod Fast>
void fastMethod(const py::handle& cls, const char* name) {
  static PyObject* slow = nullptr;  // the pybind11 method, set once at import
  installFastMethod(
      cls, name,
      [](PyObject* self, PyObject*) -> PyObject* {
        return callFastMethod(self, Fast, slow);
      },
      &slow);
}

// The calling thread's Python stack (code objects and instruction offsets,
// resolved when a snapshot is taken), or null outside Python. Takes the GIL
// itself; never throws. python_stacks.cpp.
std::shared_ptr<const HostStack> capturePythonStack();

// A seed as torch takes it: [-2^63, 2^64); negative values map to 2^64 + seed.
// Throws InvalidArgument outside that range or for a non-int.
std::uint64_t toSeed(const py::handle& seed);

// A device given as accel.Device or text ("openreg:1"); TypeError otherwise.
Device toDevice(const py::handle& device);
// The device index a backend-module call names for backend `type`: None
// (-1, the current device), an int, or text / a Device of that type.
// Throws InvalidArgument (naming `what`) for a device of another type.
DeviceIndex indexFor(DeviceType type, const py::handle& device, const char* what);

// A device with an index: None is the current accelerator's current device,
// an int that accelerator's device, "openreg" that type's current device.
// Throws NotAvailable naming `what` when None or an int has no accelerator.
Device toDeviceOrCurrent(const py::handle& device, const char* what);

// Copies `bytes` between two allocations, host or device, and waits until
// done; releases the GIL. A device side goes through its backend's copies
// hook group (docs/hooks.md) on the current stream of its device, so every
// backend that declares the group is served; between two device types the
// bytes go through a host buffer.
void copyBetween(void* dst, Device dst_device, bool dst_host, const void* src,
                 Device src_device, bool src_host, std::size_t bytes);

}  // namespace accel::python

namespace accel::python {

// What a backend extra needs to know of an accel.Buffer. Throws
// InvalidArgument when `buffer` is not one.
struct BufferView {
  void* data;
  std::size_t nbytes;
  Device device;
  bool host_accessible;
};
BufferView bufferView(const py::handle& buffer, const char* what);

}  // namespace accel::python

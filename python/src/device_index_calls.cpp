// accel.set_device_index and accel.device_index without Python frames or
// pybind11's dispatcher in their common case (an int index of the current
// accelerator).
//
// Why: both are called around every region of work on a device. As Python
// (the type rules in accel/accelerator.py, then the backend module's
// function, then the Hooks binding) set_device_index cost 12-14 no-op
// binding calls and `with device_index(i)` 19-25 (docs/performance.md, "The
// cheap calls"). Here an int index goes straight to the hooks; everything
// else (text, a Device, another type, bad values, no accelerator) goes to the
// Python definition, which stays the one statement of the rules and of every
// error message.
//
// Thread-safety: the current device is per thread, as in the hooks; a guard
// object is used by the thread that enters it.
#include <Python.h>

#include <optional>

#include "accel/context.h"
#include "bindings.h"
#include "typed_object.h"

namespace accel::python {
namespace {

// The device index an exact int argument names, when it is one the fast
// path takes: -1 (the current device) or 0 to kMaxDevicesPerType - 1. A bool
// (not an exact int), a larger or more negative int, or another type: none,
// and the Python definition decides (refusals included).
std::optional<DeviceIndex> fastIndex(PyObject* arg) noexcept {
  if (!PyLong_CheckExact(arg)) return std::nullopt;
  int overflow = 0;
  const long value = PyLong_AsLongAndOverflow(arg, &overflow);
  if (overflow != 0 || value < -1 || value >= kMaxDevicesPerType) return std::nullopt;
  return static_cast<DeviceIndex>(value);
}

// The single argument of a call taking (device), positional or by keyword.
PyObject* singleArgument(PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) noexcept {
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  if (nargs == 1 && nkw == 0) return args[0];
  if (nargs == 0 && nkw == 1 &&
      PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "device") == 0) {
    return args[0];
  }
  return nullptr;
}

// ---- set_device_index ----

PyObject* fastSetDeviceIndex(const void*, PyObject* const* args, Py_ssize_t nargs,
                             PyObject* kwnames) noexcept {
  PyObject* arg = singleArgument(args, nargs, kwnames);
  if (arg == nullptr) return nullptr;
  const std::optional<DeviceIndex> index = fastIndex(arg);
  if (!index) return nullptr;
  if (*index < 0) Py_RETURN_NONE;  // torch's rule: a negative index changes nothing
  const std::optional<DeviceType> type = globalContext().currentAccelerator();
  if (!type) return nullptr;  // the Python definition raises NotAvailableError
  try {
    getHooks(*type).setCurrentDevice(*index);
  } catch (...) {
    // Nothing changed; the Python definition makes the same call and raises
    // the hook's error as every binding does.
    return nullptr;
  }
  Py_RETURN_NONE;
}

// ---- device_index ----

// An accel.device_index object. The fast state (an int index of the current
// accelerator, or None) keeps the type and index; any other argument keeps
// the object the Python definition made (`fallback`) and forwards to it.
struct DeviceIndexGuard {
  PyObject_HEAD DeviceType type;
  DeviceIndex index;  // -1: the block changes nothing
  DeviceIndex previous;
  PyObject* fallback;  // a strong reference, or null in the fast state
};

PyObject* g_fallback_factory = nullptr;  // strong; set once at import

PyObject* newGuard(PyTypeObject* cls, PyObject* device) noexcept {
  DeviceType type = DeviceType::CPU;
  DeviceIndex index = -1;
  PyObject* fallback = nullptr;
  std::optional<DeviceIndex> fast;
  std::optional<DeviceType> current;
  if (device != Py_None) {
    fast = fastIndex(device);
    if (fast && *fast >= 0) current = globalContext().currentAccelerator();
  }
  if (device == Py_None) {
    // None changes nothing, with or without an accelerator.
  } else if (fast && *fast >= 0 && current) {
    type = *current;
    index = *fast;
  } else {
    fallback = PyObject_CallOneArg(g_fallback_factory, device);
    if (fallback == nullptr) return nullptr;
  }
  auto* self = reinterpret_cast<DeviceIndexGuard*>(cls->tp_alloc(cls, 0));
  if (self == nullptr) {
    Py_XDECREF(fallback);
    return nullptr;
  }
  self->type = type;
  self->index = index;
  self->previous = -1;
  self->fallback = fallback;
  return reinterpret_cast<PyObject*>(self);
}

PyObject* guardVectorcall(PyObject* cls, PyObject* const* args, std::size_t nargsf,
                          PyObject* kwnames) {
  PyObject* device = singleArgument(args, PyVectorcall_NARGS(nargsf), kwnames);
  if (device == nullptr) {
    PyErr_SetString(PyExc_TypeError,
                    "accel.device_index(device) takes one argument: an index, text like "
                    "'openreg:0', an accel.Device or None");
    return nullptr;
  }
  return newGuard(reinterpret_cast<PyTypeObject*>(cls), device);
}

PyObject* guardNew(PyTypeObject* cls, PyObject* args, PyObject* kwargs) {
  // The call without vectorcall (tp_call through type_call): the same parse.
  static const char* names[] = {"device", nullptr};
  PyObject* device = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:device_index",
                                   const_cast<char**>(names), &device)) {
    return nullptr;
  }
  return newGuard(cls, device);
}

void guardDealloc(PyObject* object) {
  auto* self = reinterpret_cast<DeviceIndexGuard*>(object);
  PyTypeObject* cls = Py_TYPE(object);
  Py_XDECREF(self->fallback);
  cls->tp_free(object);
  Py_DECREF(cls);  // heap type: each instance holds a reference
}

PyObject* guardEnter(PyObject* object, PyObject*) {
  auto* self = reinterpret_cast<DeviceIndexGuard*>(object);
  if (self->fallback != nullptr) {
    PyObject* result = PyObject_CallMethod(self->fallback, "__enter__", nullptr);
    if (result == nullptr) return nullptr;
    Py_DECREF(result);
    Py_RETURN_NONE;
  }
  if (self->index < 0) Py_RETURN_NONE;
  try {
    self->previous = getHooks(self->type).exchangeDevice(self->index);
  } catch (...) {
    translateCurrentException();
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyObject* guardExit(PyObject* object, PyObject* const* args, Py_ssize_t nargs) {
  auto* self = reinterpret_cast<DeviceIndexGuard*>(object);
  if (self->fallback != nullptr) {
    PyObject* exit = PyObject_GetAttrString(self->fallback, "__exit__");
    if (exit == nullptr) return nullptr;
    PyObject* result =
        PyObject_Vectorcall(exit, args, static_cast<std::size_t>(nargs), nullptr);
    Py_DECREF(exit);
    if (result == nullptr) return nullptr;
    Py_DECREF(result);
    Py_RETURN_NONE;  // never swallows the block's exception
  }
  if (self->index < 0) Py_RETURN_NONE;
  try {
    getHooks(self->type).setCurrentDevice(self->previous);
  } catch (...) {
    translateCurrentException();
    return nullptr;
  }
  Py_RETURN_NONE;
}

PyMethodDef g_guard_methods[] = {
    {"__enter__", guardEnter, METH_NOARGS,
     "Makes the device current (the previous one is kept for __exit__); returns None."},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&guardExit)),
     METH_FASTCALL,
     "Makes the previous device current again; never suppresses an exception."},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot g_guard_slots[] = {
    {Py_tp_new, reinterpret_cast<void*>(&guardNew)},
    {Py_tp_dealloc, reinterpret_cast<void*>(&guardDealloc)},
    {Py_tp_methods, g_guard_methods},
    {Py_tp_doc,
     const_cast<char*>(
         "device_index(device)\n--\n\n"
         "Context manager: `device` (an index, or 'type:N' / an accel.Device of "
         "the current accelerator) is this thread's current device inside the "
         "block, the previous one after it (also when the block raises). None "
         "changes nothing.")},
    {0, nullptr}};

PyType_Spec g_guard_spec = {"accel.device_index", sizeof(DeviceIndexGuard), 0,
                            Py_TPFLAGS_DEFAULT, g_guard_slots};

}  // namespace

void bindDeviceIndexCalls(py::module_& m) {
  m.def(
      "_fast_set_device_index",
      [](const Typed<"Callable[[Union[None, int, str, Device]], None]", py::function>&
             python_definition)
          -> Typed<"Callable[[Union[None, int, str, Device]], None]"> {
        return fastFunction(&fastSetDeviceIndex, nullptr, python_definition);
      },
      py::arg("python_definition"),
      "accel.set_device_index: `python_definition` with an int index of the current "
      "accelerator answered in C++.");
  m.def(
      "_device_index_class",
      [](const Typed<"Callable[[Any], Any]", py::function>& fallback_factory)
          -> Typed<"Type[Any]"> {
        if (g_fallback_factory != nullptr) {
          throw py::value_error("_device_index_class: already made (once per process)");
        }
        PyObject* cls = PyType_FromSpec(&g_guard_spec);
        if (cls == nullptr) throw py::error_already_set();
        // Calls of the class skip type_call's tuple and dict (CPython reads a
        // type object's own tp_vectorcall when it calls it).
        reinterpret_cast<PyTypeObject*>(cls)->tp_vectorcall = &guardVectorcall;
        g_fallback_factory = fallback_factory.inc_ref().ptr();  // never released
        return py::reinterpret_steal<py::object>(cls);
      },
      py::arg("fallback_factory"),
      "accel.device_index as a native class; `fallback_factory(device)` makes the "
      "context manager for any argument other than None or an int index.");
}

}  // namespace accel::python

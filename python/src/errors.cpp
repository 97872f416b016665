// accel's error classes for Python, and the translation of C++ errors.
//
// The classes are made here, not in Python, so that the translator can raise
// them before the package has finished importing. Each also derives from the
// builtin a Python caller would catch: ValueError for bad arguments,
// NotImplementedError for unsupported hooks, MemoryError for out of memory.
#include <Python.h>
#include <unistd.h>

#include "accel/error.h"
#include "bindings.h"

namespace accel::python {
namespace {

// Owned by the module (added as attributes), alive until interpreter exit.
PyObject* g_error = nullptr;
PyObject* g_invalid_argument = nullptr;
PyObject* g_not_supported = nullptr;
PyObject* g_not_available = nullptr;
PyObject* g_out_of_memory = nullptr;
PyObject* g_device_error = nullptr;

PyObject* makeClass(py::module_& m, const char* name,
                    std::initializer_list<PyObject*> bases, const char* doc) {
  py::tuple base_tuple(bases.size());
  std::size_t i = 0;
  for (PyObject* base : bases) base_tuple[i++] = py::reinterpret_borrow<py::object>(base);
  const std::string qualified = std::string("accel.") + name;
  PyObject* cls =
      PyErr_NewExceptionWithDoc(qualified.c_str(), doc, base_tuple.ptr(), nullptr);
  if (cls == nullptr) throw py::error_already_set();
  m.add_object(name, py::reinterpret_borrow<py::object>(cls));
  return cls;
}

}  // namespace

GilRelease::~GilRelease() noexcept(false) {
  if (_Py_IsFinalizing() != 0) {
    // Exiting: no Python code may run again on this thread, and exit()
    // ends it with the process.
    for (;;) pause();
  }
  PyEval_RestoreThread(state_);
}

void bindErrors(py::module_& m) {
  g_error = makeClass(m, "Error", {PyExc_RuntimeError},
                      "Base of every accelhooks error; the message is the C++ one: what "
                      "was asked, what was wrong, what to do.");
  g_invalid_argument = makeClass(m, "InvalidArgumentError", {g_error, PyExc_ValueError},
                                 "A bad argument: device text, index, state blob, size.");
  g_not_supported =
      makeClass(m, "NotSupportedError", {g_error, PyExc_NotImplementedError},
                "The backend does not implement this hook or hook group; the message "
                "names the backend and the group.");
  g_not_available = makeClass(m, "NotAvailableError", {g_error},
                              "No backend is registered for the device type, or a "
                              "plugin did not load.");
  g_out_of_memory = makeClass(m, "OutOfMemoryError", {g_error, PyExc_MemoryError},
                              "The device (or pinned host memory) is full.");
  g_device_error = makeClass(m, "DeviceError", {g_error},
                             "The device failed or refused: lost device, misuse, or a "
                             "backend initialised before fork() used in the child.");

  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const accel::OutOfMemory& e) {
      PyErr_SetString(g_out_of_memory, e.message().c_str());
    } catch (const accel::InvalidArgument& e) {
      PyErr_SetString(g_invalid_argument, e.message().c_str());
    } catch (const accel::NotSupported& e) {
      PyErr_SetString(g_not_supported, e.message().c_str());
    } catch (const accel::NotAvailable& e) {
      PyErr_SetString(g_not_available, e.message().c_str());
    } catch (const accel::DeviceError& e) {
      PyErr_SetString(g_device_error, e.message().c_str());
    } catch (const accel::Error& e) {
      PyErr_SetString(g_error, e.message().c_str());
    }
  });
}

}  // namespace accel::python

// accel's error classes for Python, and the translation of C++ errors.
//
// The classes are made here, not in Python, so that the translator can raise
// them before the package has finished importing. A message reaches Python
// in Python's words: no C++ source location in it (that is the exception's
// `cpp_location` attribute) and no C++ spelling of a call Python makes
// differently. Each also derives from the
// builtin a Python caller would catch: ValueError for bad arguments,
// NotImplementedError for unsupported hooks, MemoryError for out of memory.
#include <Python.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
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

bool isPathChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '-' || c == '.' || c == '/';
}

// The length of a C++ source location "[dir/file.cpp:123]" at `at`, or 0.
std::size_t locationLength(std::string_view text, std::size_t at) {
  if (at >= text.size() || text[at] != '[') return 0;
  std::size_t i = at + 1;
  while (i < text.size() && isPathChar(text[i])) ++i;
  const std::string_view path = text.substr(at + 1, i - at - 1);
  const bool source_file = path.ends_with(".cpp") || path.ends_with(".h") ||
                           path.ends_with(".cc") || path.ends_with(".cu") ||
                           path.ends_with(".hpp");
  if (!source_file || i >= text.size() || text[i] != ':') return 0;
  const std::size_t digits = ++i;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  if (i == digits || i >= text.size() || text[i] != ']') return 0;
  return i + 1 - at;
}

// C++ spellings a message may carry, and what a Python caller writes instead
// (hook names from the catalogue, never typed here).
const std::vector<std::pair<std::string, std::string_view>>& pythonWords() {
  static const auto* words = new std::vector<std::pair<std::string, std::string_view>>{
      {"accel::loadBackend(", "accel.load_backend("},
      {"EventFlags{.enable_timing = true}", "accel.Event(enable_timing=True)"},
      {std::string(hookInfo(HookId::setMemoryFraction).name) + "(",
       "set_per_process_memory_fraction("},
  };
  return *words;
}

// A C++ error's message in Python's words: the source locations that code
// wrapping another error's what() glued in (" [src/x.cpp:12]") are moved
// to `locations`, and C++ spellings of calls are replaced by Python's.
std::string pythonMessage(std::string_view message, std::string& locations) {
  std::string out;
  out.reserve(message.size());
  for (std::size_t i = 0; i < message.size();) {
    if (const std::size_t n = locationLength(message, i); n > 0) {
      if (!locations.empty()) locations += "; ";
      locations += message.substr(i + 1, n - 2);
      if (!out.empty() && out.back() == ' ') out.pop_back();
      i += n;
      continue;
    }
    out += message[i++];
  }
  for (const auto& [cpp, python] : pythonWords()) {
    for (std::size_t at = out.find(cpp); at != std::string::npos;
         at = out.find(cpp, at + python.size())) {
      out.replace(at, cpp.size(), python);
    }
  }
  return out;
}

// Raises `cls` with the message in Python's words; the C++ source locations
// go to the exception's `cpp_location` attribute ("file:line", then those of
// the errors it wraps after "; "), for a bug report, not for the reader.
void raiseInPythonWords(PyObject* cls, const accel::Error& error) {
  std::string locations = std::string(error.location().file_name()) + ":" +
                          std::to_string(error.location().line());
  std::string inner;
  const std::string message = pythonMessage(error.message(), inner);
  if (!inner.empty()) locations += "; " + inner;
  PyObject* text = PyUnicode_DecodeUTF8(
      message.data(), static_cast<Py_ssize_t>(message.size()), "replace");
  PyObject* instance = text == nullptr ? nullptr : PyObject_CallOneArg(cls, text);
  Py_XDECREF(text);
  if (instance == nullptr) return;  // that failure is the Python error now
  PyObject* where = PyUnicode_FromString(locations.c_str());
  if (where == nullptr || PyObject_SetAttrString(instance, "cpp_location", where) != 0) {
    PyErr_Clear();
  }
  Py_XDECREF(where);
  PyErr_SetObject(cls, instance);
  Py_DECREF(instance);
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
                      "Base of every accelhooks error. The message says what was asked, "
                      "what was wrong and what to do; `cpp_location` (when the C++ "
                      "library raised it) where in its source.");
  // The attribute every instance gets (raiseInPythonWords), declared on the
  // class for the generated stub (python/tools/generate_stubs.py).
  py::handle(g_error).attr("__annotations__") = py::dict(py::arg("cpp_location") = "str");
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
      raiseInPythonWords(g_out_of_memory, e);
    } catch (const accel::InvalidArgument& e) {
      raiseInPythonWords(g_invalid_argument, e);
    } catch (const accel::NotSupported& e) {
      raiseInPythonWords(g_not_supported, e);
    } catch (const accel::NotAvailable& e) {
      raiseInPythonWords(g_not_available, e);
    } catch (const accel::DeviceError& e) {
      raiseInPythonWords(g_device_error, e);
    } catch (const accel::Error& e) {
      raiseInPythonWords(g_error, e);
    }
  });
}

}  // namespace accel::python

// fastFunction (bindings.h): a Python function whose common case bypasses
// pybind11's dispatcher.
//
// Why: pybind11 2.10 builds two std::vectors per call of a function that
// takes arguments (function_call's args and args_convert), even when the
// argument is a defaulted None; on the calls a program makes in its inner
// loop (current_stream) that is most of the cost over a no-op call. The fast
// path is a vectorcall C function; whatever it does not answer goes, with the
// same arguments, to the pybind11 function, which stays the one definition
// of the behaviour and of every error.
//
// fastMethod (bindings.h) does the same for a method taking only self
// (Stream.query, Event.query, polled in loops): pybind11's dispatcher
// converts self through its type registry and builds the same vectors; a
// METH_NOARGS method reads the C++ object straight from pybind11's instance.
#include <string>

#include "bindings.h"

namespace accel::python {
namespace {

struct FastFunction {
  std::string name;
  std::string doc;
  PyMethodDef def{};
  FastPath fast = nullptr;
  const void* data = nullptr;
  PyObject* slow = nullptr;  // a strong reference, never released
};

PyObject* callFast(PyObject* self, PyObject* const* args, Py_ssize_t nargsf,
                   PyObject* kwnames) {
  auto* f = static_cast<FastFunction*>(PyCapsule_GetPointer(self, nullptr));
  if (f == nullptr) return nullptr;  // not ours: the capsule check set the error
  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (PyObject* result = f->fast(f->data, args, nargs, kwnames)) return result;
  return PyObject_Vectorcall(f->slow, args, nargsf, kwnames);
}

}  // namespace

py::object fastFunction(FastPath fast, const void* data, const py::object& slow) {
  // Leaked with the function: a module-level function lives as long as the
  // process, and its PyMethodDef must outlive every object made from it.
  auto* f = new FastFunction();
  f->fast = fast;
  f->data = data;
  f->slow = slow.inc_ref().ptr();
  f->name = slow.attr("__name__").cast<std::string>();
  f->def.ml_name = f->name.c_str();
  f->def.ml_meth = reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&callFast));
  f->def.ml_flags = METH_FASTCALL | METH_KEYWORDS;
  // The pybind11 function's docstring, signature line included, so that
  // help() and the stub generator (python/tools/generate_stubs.py) read one text.
  f->doc = slow.attr("__doc__").cast<std::string>();
  f->def.ml_doc = f->doc.c_str();
  py::capsule self(f);
  PyObject* function = PyCFunction_NewEx(&f->def, self.ptr(), nullptr);
  if (function == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(function);
}

PyObject* callFastMethod(PyObject* self, FastMethod fast, PyObject* slow) noexcept {
  // The method descriptor has checked that self is an instance of the class
  // (or a subclass); pybind11's instance tells whether its C++ object is
  // there (a Python subclass whose __init__ did not call the base's has none).
  auto* inst = reinterpret_cast<py::detail::instance*>(self);
  if (!inst->simple_layout || !inst->simple_holder_constructed) {
    return PyObject_CallOneArg(slow, self);
  }
  try {
    return fast(inst->simple_value_holder[0]);
  } catch (...) {
    translateCurrentException();
    return nullptr;
  }
}

void translateCurrentException() noexcept {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (...) {
    // pybind11's own order: module-local translators, then global ones.
    if (py::detail::apply_exception_translators(
            py::detail::get_local_internals().registered_exception_translators))
      return;
    if (py::detail::apply_exception_translators(
            py::detail::get_internals().registered_exception_translators))
      return;
    PyErr_SetString(PyExc_SystemError, "an exception escaped accel's error translator");
  }
}

void installFastMethod(const py::handle& cls, const char* name, PyCFunction method,
                       PyObject** slow) {
  py::object function = cls.attr(name);  // the pybind11 function, unbound
  *slow = function.inc_ref().ptr();      // a strong reference, never released
  // Leaked: the method lives as long as the class, which lives as long as
  // the process, and its PyMethodDef must outlive it.
  auto* doc = new std::string(function.attr("__doc__").cast<std::string>());
  auto* def = new PyMethodDef{name, method, METH_NOARGS, doc->c_str()};
  PyObject* descriptor =
      PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), def);
  if (descriptor == nullptr) throw py::error_already_set();
  py::setattr(cls, name, py::reinterpret_steal<py::object>(descriptor));
}

}  // namespace accel::python

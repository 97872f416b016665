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
  // help() and the stub check (tests/python/test_stubs.py) read one text.
  f->doc = slow.attr("__doc__").cast<std::string>();
  f->def.ml_doc = f->doc.c_str();
  py::capsule self(f);
  PyObject* function = PyCFunction_NewEx(&f->def, self.ptr(), nullptr);
  if (function == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(function);
}

}  // namespace accel::python

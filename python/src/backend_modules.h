// The native Python modules of backends: each backend's binding file
// (openreg.cpp, opencl.cpp) registers the module that holds its extras, and
// importing accel._C creates every registered one as its own module
// (sys.modules["accel.openreg._native"]), so that accel._C itself names no
// backend. A backend built into the package is one whose binding file was
// compiled in (python/CMakeLists.txt decides); its Python package imports its
// module, and a package whose module is missing raises ImportError.
//
//   void bindOpenRegModule(py::module_& m) { m.def("fill_uniform", ...); }
//   const BackendModuleRegistrar kOpenReg{"accel.openreg._native", "doc",
//   &bindOpenRegModule};
//
// Thread-safety: registrars run during static initialisation of the module's
// shared library; createBackendModules runs once, in PyInit__C, with the GIL
// held. Lifetime: the modules live as long as the interpreter (sys.modules).
#pragma once

#include <pybind11/pybind11.h>

namespace accel::python {

using BindBackendModule = void (*)(pybind11::module_& m);

class BackendModuleRegistrar {
 public:
  // `name` and `doc` must be string literals (kept by pointer for the life
  // of the process). Never throws (runs during static initialisation).
  BackendModuleRegistrar(const char* name, const char* doc,
                         BindBackendModule bind) noexcept;
};

// Creates each registered module, fills it with its bind function and
// inserts it in sys.modules under its name. Throws what a bind function
// throws (the import of accel._C then fails, naming it).
void createBackendModules();

}  // namespace accel::python

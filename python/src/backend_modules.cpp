// The registry of backends' native Python modules (backend_modules.h).
#include "backend_modules.h"

#include <deque>

namespace accel::python {
namespace {

namespace py = pybind11;

struct BackendModule {
  const char* name;
  const char* doc;
  BindBackendModule bind;
  // Python keeps a pointer to a module's definition for the module's whole
  // life, so each entry owns one at a stable address (a deque never moves
  // its elements on push_back).
  PyModuleDef definition{};
};

// A function-local static: registrars run during static initialisation, in
// an order across translation units that nothing fixes.
std::deque<BackendModule>& registry() noexcept {
  static std::deque<BackendModule> modules;
  return modules;
}

}  // namespace

BackendModuleRegistrar::BackendModuleRegistrar(const char* name, const char* doc,
                                               BindBackendModule bind) noexcept {
  registry().push_back(BackendModule{name, doc, bind});
}

void createBackendModules() {
  py::dict modules = py::module_::import("sys").attr("modules");
  for (BackendModule& backend : registry()) {
    py::module_ module = py::module_::create_extension_module(backend.name, backend.doc,
                                                              &backend.definition);
    backend.bind(module);
    modules[backend.name] = module;
  }
}

}  // namespace accel::python

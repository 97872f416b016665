// accel._C: the native half of the `accel` package. The Python package
// (python/accel) is the public face; this module converts types, releases the
// GIL on waits and maps errors. Importing it touches no device.
#include <pybind11/pybind11.h>

#include "backend_modules.h"
#include "bindings.h"

PYBIND11_MODULE(_C, m) {
  using namespace accel::python;
  m.doc() =
      "Native binding of accelhooks (the layer between the accel package and the "
      "C++ context). Use the accel package, not this module.";
  bindErrors(m);
  bindObjects(m);
  bindHooks(m);
  bindMemory(m);
  bindStreams(m);
  bindStreamObjects(m);
  bindBuffer(m);
  bindDeviceFills(m);
  bindPlugins(m);
  bindValidation(m);
  bindHookApi(m);
  bindDeviceIndexCalls(m);
  bindTrace(m);
  // Each built backend's own module (accel.openreg._native, ...): this
  // module names no backend (backend_modules.h).
  createBackendModules();
  // The baseline of bench/python: the cheapest call pybind11 can make.
  m.def(
      "_noop", [] {}, "Does nothing; the call-overhead baseline of the benchmarks.");
}

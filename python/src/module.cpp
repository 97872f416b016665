// accel._C: the native half of the `accel` package. The Python package
// (python/accel) is the public face; this module converts types, releases the
// GIL on waits and maps errors. Importing it touches no device.
#include <pybind11/pybind11.h>

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
  bindPlugins(m);
  bindHookApi(m);
  bindDeviceIndexCalls(m);
#if defined(ACCEL_PY_WITH_OPENREG)
  bindOpenReg(m);
  m.attr("_has_openreg") = true;
#else
  m.attr("_has_openreg") = false;
#endif
#if defined(ACCEL_PY_WITH_OPENCL)
  bindOpenCl(m);
  m.attr("_has_opencl") = true;
#else
  m.attr("_has_opencl") = false;
#endif
  // The baseline of bench/python: the cheapest call pybind11 can make.
  m.def(
      "_noop", [] {}, "Does nothing; the call-overhead baseline of the benchmarks.");
}

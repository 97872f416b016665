// openClReady: the check every OpenCL benchmark makes first.
//
// Registers the backend and answers whether it has a device; when not, the
// benchmark is marked skipped with the backend's reason, so a machine
// without OpenCL reports why instead of timing nothing.
// Thread-safety: call from the benchmark's thread. Throws nothing the
// backend's registerBackend() does not.
#pragma once

#include <benchmark/benchmark.h>

#include "accel/opencl/opencl.h"

inline bool openClReady(benchmark::State& state) {
  if (accel::opencl::registerBackend().isAvailable()) return true;
  state.SkipWithError(
      ("no OpenCL device: " + accel::opencl::availability().reason).c_str());
  return false;
}

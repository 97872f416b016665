// main() of the CUDA benchmarks: runs Google Benchmark when a CUDA device is
// usable, else says "no GPU" with the reason and exits 0 (the programs must
// build and run cleanly on machines without one; docs/performance.md says
// what has been measured).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>

#include "accel/cuda/cuda.h"

inline int runCudaBenchmarks(int argc, char** argv, const char* program) {
  if (!accel::cuda::registerBackend().isAvailable()) {
    std::printf("%s: no GPU: %s; nothing measured\n", program,
                accel::cuda::availability().reason.c_str());
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

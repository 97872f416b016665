// Shared by the GPU tests: register the backend, and skip with the reason
// when this machine has no usable CUDA device (CI, and this project's build
// machines so far). docs/cuda.md lists what has run on a GPU.
#pragma once

#include <gtest/gtest.h>

#include "accel/cuda/cuda.h"
#include "accel/hooks.h"

#define ACCEL_SKIP_WITHOUT_GPU()                          \
  do {                                                    \
    if (!accel::cuda::registerBackend().isAvailable()) {  \
      GTEST_SKIP() << "no usable CUDA device here: "      \
                   << accel::cuda::availability().reason; \
    }                                                     \
  } while (false)

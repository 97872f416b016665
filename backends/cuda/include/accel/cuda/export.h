// ACCEL_CUDA_API: exports a symbol of libaccel_cuda.so (everything else in
// the plugin is hidden).
#pragma once

#define ACCEL_CUDA_API __attribute__((visibility("default")))

// A stand-in for libcuda.so.1 (built under that name in a directory of its
// own), so that the driver probe's "driver present" reasons can be tested on
// machines without the NVIDIA driver. FAKE_CUDA_DRIVER_VERSION sets what
// cuDriverGetVersion reports (default 13000); FAKE_CUDA_INIT=no_device makes
// cuInit fail with CUDA_ERROR_NO_DEVICE; otherwise cuInit succeeds and
// cuDeviceGetCount reports 0 devices. Only the probe's functions exist: a
// backend that got further would fail loudly.
#include <cstdlib>
#include <cstring>

extern "C" {

__attribute__((visibility("default"))) int cuDriverGetVersion(int* version) {
  const char* value = std::getenv("FAKE_CUDA_DRIVER_VERSION");
  *version = value != nullptr ? std::atoi(value) : 13000;
  return 0;
}

__attribute__((visibility("default"))) int cuInit(unsigned int) {
  const char* mode = std::getenv("FAKE_CUDA_INIT");
  return mode != nullptr && std::strcmp(mode, "no_device") == 0
             ? 100
             : 0;  // CUDA_ERROR_NO_DEVICE
}

__attribute__((visibility("default"))) int cuDeviceGetCount(int* count) {
  *count = 0;
  return 0;
}

__attribute__((visibility("default"))) int cuGetErrorName(int error, const char** name) {
  *name = error == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}

}  // extern "C"

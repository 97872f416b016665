// The backend contract suite (conformance/) run against the cuda backend:
// every hook of every group it declares, NotSupported for the others. Cases
// that need a device skip with the suite's reason where none is usable.
// The in-memory test backend is registered beside it, so that the copies
// cases can hand cuda another backend's memory.
#include "accel/conformance.h"
#include "accel/cuda/cuda.h"
#include "support/test_backend.h"

namespace {

const bool kCudaRegistered = [] {
  (void)accel::cuda::registerBackend();
  (void)accel::testing::registerTestBackend("testdev", 1);
  return true;
}();

}  // namespace

ACCEL_INSTANTIATE_CONFORMANCE(Cuda, "cuda");

// The backend contract suite (conformance/) run against the cuda backend:
// every hook of every group it declares, NotSupported for the others. Cases
// that need a device skip with the suite's reason where none is usable.
#include "accel/conformance.h"
#include "accel/cuda/cuda.h"

namespace {

const bool kCudaRegistered = [] {
  (void)accel::cuda::registerBackend();
  return true;
}();

}  // namespace

ACCEL_INSTANTIATE_CONFORMANCE(Cuda, "cuda");

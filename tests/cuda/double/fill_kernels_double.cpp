// launchFill on the runtime double: the kernel's own chunk loop
// (fill_mapping.h, the code the GPU kernel runs per thread) executed on the
// stream's worker, in stream order and in captures, so the backend's fills,
// captured fills and their memory are exercised without a GPU.
#include "cuda_double.h"
#include "fill_kernels.h"
#include "fill_mapping.h"

namespace accel::cuda::detail {
namespace {

std::size_t elementBytes(const accel::detail::FillJob& job) {
  using accel::detail::FillOutput;
  if (job.output == FillOutput::Byte) return 1;
  if (job.output == FillOutput::Float) return sizeof(float);
  switch (job.kind) {
    case FillKind::Uint64:
    case FillKind::UniformDouble:
    case FillKind::NormalDouble:
      return 8;
    default:
      return 4;
  }
}

void runFill(const void* args) {
  const auto& job = *static_cast<const accel::detail::FillJob*>(args);
  const std::size_t chunks = fillChunkCount(job);
  for (std::size_t chunk = 0; chunk < chunks; ++chunk) fillChunk(job, chunk);
}

}  // namespace

cudaError_t launchFill(const accel::detail::FillJob& job, cudaStream_t stream) noexcept {
  if (fillChunkCount(job) == 0) return cudaSuccess;
  return cuda_double_launch(stream, runFill, &job, sizeof job, job.out,
                            job.count * elementBytes(job));
}

}  // namespace accel::cuda::detail

// The one CUDA kernel of the random fills: a grid-stride loop over chunks
// (fill_mapping.h). Everything it computes per element comes from
// accel/random_fill_elements.h, the code the host fills run.
#include "fill_kernels.h"
#include "fill_mapping.h"

namespace accel::cuda::detail {
namespace {

constexpr int kThreadsPerBlock = 256;
// Enough blocks to fill every SM several times over; the grid-stride loop
// covers larger fills.
constexpr std::size_t kMaxBlocks = 65535;

__global__ void fillKernel(accel::detail::FillJob job, std::size_t chunks) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t chunk =
           static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       chunk < chunks; chunk += stride) {
    fillChunk(job, chunk);
  }
}

}  // namespace

cudaError_t launchFill(const accel::detail::FillJob& job, cudaStream_t stream) noexcept {
  const std::size_t chunks = fillChunkCount(job);
  if (chunks == 0) return cudaSuccess;
  std::size_t blocks = (chunks + kThreadsPerBlock - 1) / kThreadsPerBlock;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  fillKernel<<<static_cast<unsigned>(blocks), kThreadsPerBlock, 0, stream>>>(job, chunks);
  return cudaGetLastError();
}

}  // namespace accel::cuda::detail

// The CUDA kernels of the random fills and their launches: the fill (a
// grid-stride loop over Philox blocks for block-aligned jobs, else over
// tiles staged in shared memory and stored coalesced: fill_mapping.h) and
// the write of a graph replay's Philox positions, a thread per slot
// (captured_fills.h). Everything computed per element comes from
// accel/random_fill_elements.h, the code the host fills run; which kernel a
// fill takes, and its grid, is host code in fill_launch.cpp. Only device
// code and the <<<>>> launches are here: gcov cannot count them.
#include "fill_kernels.h"
#include "fill_mapping.h"

namespace accel::cuda::detail {
namespace {

__global__ void __launch_bounds__(kFillThreads)
    fillKernel(accel::detail::FillJob job, std::size_t tiles,
               const std::uint64_t* replay_position) {
  __shared__ alignas(16) unsigned char staging[kFillStagingBytes];
  if (replay_position != nullptr) {
    job.seed = replay_position[0];
    job.offset += replay_position[1];
  }
  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    stageFillChunk(job, tile, threadIdx.x, staging);
    __syncthreads();
    storeFillTile(job, tile, threadIdx.x, staging);
    __syncthreads();  // the staging buffer is rewritten by the next tile
  }
}

// One instance per kind: the element mapping's switch on the kind folds away.
template <FillKind Kind>
__global__ void __launch_bounds__(kFillThreads)
    fillGroupsKernel(accel::detail::FillJob job, std::size_t groups, bool vectors) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  for (std::size_t group = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
       group < groups; group += stride) {
    storeFillGroup<Kind>(job, group, vectors);
  }
}

__global__ void writePhiloxKernel(PhiloxWrites writes) {
  const unsigned i = threadIdx.x;
  if (i >= writes.count) return;
  writes.slot[i][0] = writes.seed[i];
  writes.slot[i][1] = writes.offset[i];
}

}  // namespace

cudaError_t launchFillTilesKernel(const accel::detail::FillJob& job, std::size_t tiles,
                                  unsigned blocks, const std::uint64_t* replay_position,
                                  cudaStream_t stream) noexcept {
  fillKernel<<<blocks, kFillThreads, 0, stream>>>(job, tiles, replay_position);
  return cudaGetLastError();
}

cudaError_t launchFillGroupsKernel(const accel::detail::FillJob& job, std::size_t groups,
                                   unsigned blocks, bool vectors,
                                   cudaStream_t stream) noexcept {
  switch (job.kind) {
    case FillKind::Uint32:
      fillGroupsKernel<FillKind::Uint32>
          <<<blocks, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
    case FillKind::Uint64:
      fillGroupsKernel<FillKind::Uint64>
          <<<blocks, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
    case FillKind::UniformFloat:
      fillGroupsKernel<FillKind::UniformFloat>
          <<<blocks, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
    case FillKind::UniformDouble:
      fillGroupsKernel<FillKind::UniformDouble>
          <<<blocks, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
    case FillKind::NormalFloat:
      fillGroupsKernel<FillKind::NormalFloat>
          <<<blocks, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
    case FillKind::NormalDouble:
      fillGroupsKernel<FillKind::NormalDouble>
          <<<blocks, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
    case FillKind::Bernoulli:
      fillGroupsKernel<FillKind::Bernoulli>
          <<<blocks, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
  }
  return cudaGetLastError();
}

cudaError_t launchWritePhiloxKernel(const PhiloxWrites& writes,
                                    cudaStream_t stream) noexcept {
  writePhiloxKernel<<<1, PhiloxWrites::kMax, 0, stream>>>(writes);
  return cudaGetLastError();
}

}  // namespace accel::cuda::detail

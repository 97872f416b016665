// The CUDA kernels of the random fills: the fill (a grid-stride loop over
// Philox blocks for block-aligned jobs, else over tiles staged in shared
// memory and stored coalesced: fill_mapping.h) and
// the one-thread write of a graph replay's Philox position
// (captured_philox.h). Everything computed per element comes from
// accel/random_fill_elements.h, the code the host fills run.
#include "fill_kernels.h"
#include "fill_mapping.h"

namespace accel::cuda::detail {
namespace {

// Enough blocks to fill every SM several times over; the grid-stride loop
// covers larger fills.
constexpr std::size_t kMaxBlocks = 65535;

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

// Enough blocks for every SM of a large GPU several times over (an H200 has
// 132 SMs of 2048 threads); a thread then writes several groups.
constexpr std::size_t kMaxGroupBlocks = 8192;

cudaError_t launchGroups(const accel::detail::FillJob& job,
                         cudaStream_t stream) noexcept {
  const std::size_t groups = fillGroupCount(job);
  std::size_t blocks = (groups + kFillThreads - 1) / kFillThreads;
  if (blocks > kMaxGroupBlocks) blocks = kMaxGroupBlocks;
  const auto grid = static_cast<unsigned>(blocks);
  const bool vectors = fillGroupsStoreVectors(job);
  switch (job.kind) {
    case FillKind::Uint32:
      fillGroupsKernel<FillKind::Uint32>
          <<<grid, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
    case FillKind::Uint64:
      fillGroupsKernel<FillKind::Uint64>
          <<<grid, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
    case FillKind::UniformFloat:
      fillGroupsKernel<FillKind::UniformFloat>
          <<<grid, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
    case FillKind::UniformDouble:
      fillGroupsKernel<FillKind::UniformDouble>
          <<<grid, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
    case FillKind::NormalFloat:
      fillGroupsKernel<FillKind::NormalFloat>
          <<<grid, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
    case FillKind::NormalDouble:
      fillGroupsKernel<FillKind::NormalDouble>
          <<<grid, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
    case FillKind::Bernoulli:
      fillGroupsKernel<FillKind::Bernoulli>
          <<<grid, kFillThreads, 0, stream>>>(job, groups, vectors);
      break;
  }
  return cudaGetLastError();
}

__global__ void writePhiloxKernel(std::uint64_t* position, std::uint64_t seed,
                                  std::uint64_t offset) {
  position[0] = seed;
  position[1] = offset;
}

}  // namespace

cudaError_t launchFill(const accel::detail::FillJob& job,
                       const std::uint64_t* replay_position,
                       cudaStream_t stream) noexcept {
  const std::size_t tiles = fillTileCount(job);
  if (tiles == 0) return cudaSuccess;
  if (replay_position == nullptr && fillJobIsBlockAligned(job))
    return launchGroups(job, stream);
  const std::size_t blocks = tiles < kMaxBlocks ? tiles : kMaxBlocks;
  fillKernel<<<static_cast<unsigned>(blocks), kFillThreads, 0, stream>>>(job, tiles,
                                                                         replay_position);
  return cudaGetLastError();
}

cudaError_t launchWritePhilox(std::uint64_t* position, std::uint64_t seed,
                              std::uint64_t offset, cudaStream_t stream) noexcept {
  writePhiloxKernel<<<1, 1, 0, stream>>>(position, seed, offset);
  return cudaGetLastError();
}

}  // namespace accel::cuda::detail

// The fill kernels' launcher: which kernel a fill takes and its grid. Host
// code, apart from the kernels' own launches (fill_kernels.cu), so that it is
// compiled, tested and counted by coverage with the rest of the backend.
#include "fill_kernels.h"
#include "fill_mapping.h"

namespace accel::cuda::detail {
namespace {

// Enough blocks to fill every SM several times over; the grid-stride loop
// covers larger fills.
constexpr std::size_t kMaxBlocks = 65535;

// Enough blocks for every SM of a large GPU several times over (an H200 has
// 132 SMs of 2048 threads); a thread then writes several groups.
constexpr std::size_t kMaxGroupBlocks = 8192;

}  // namespace

cudaError_t launchFill(const accel::detail::FillJob& job,
                       const std::uint64_t* replay_position,
                       cudaStream_t stream) noexcept {
  const std::size_t tiles = fillTileCount(job);
  if (tiles == 0) return cudaSuccess;
  // The fast path (block-aligned, uncaptured): a group of one Philox block
  // per thread, in registers.
  if (replay_position == nullptr && fillJobIsBlockAligned(job)) {
    const std::size_t groups = fillGroupCount(job);
    std::size_t blocks = (groups + kFillThreads - 1) / kFillThreads;
    if (blocks > kMaxGroupBlocks) blocks = kMaxGroupBlocks;
    return launchFillGroupsKernel(job, groups, static_cast<unsigned>(blocks),
                                  fillGroupsStoreVectors(job), stream);
  }
  const std::size_t blocks = tiles < kMaxBlocks ? tiles : kMaxBlocks;
  return launchFillTilesKernel(job, tiles, static_cast<unsigned>(blocks), replay_position,
                               stream);
}

cudaError_t launchWritePhilox(const PhiloxWrites& writes, cudaStream_t stream) noexcept {
  if (writes.count == 0) return cudaSuccess;
  return launchWritePhiloxKernel(writes, stream);
}

}  // namespace accel::cuda::detail

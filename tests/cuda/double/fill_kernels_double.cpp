// The fill kernels' launches on the runtime double (the launcher,
// fill_launch.cpp, is the backend's own): the kernel's own steps
// (fill_mapping.h: every thread of a tile stages its chunk, then every
// thread stores its elements, the code the GPU kernel runs per thread)
// executed on the stream's worker (the block-aligned fast path's groups, or
// the tiles), in stream order and in captures, so the
// backend's fills, captured fills and their memory are exercised without a
// GPU. A captured fill's Philox position is read when the work runs, as the
// kernel reads it.
#include <vector>

#include "cuda_double.h"
#include "fill_kernels.h"
#include "fill_mapping.h"

namespace accel::cuda::detail {
namespace {

struct FillArgs {
  accel::detail::FillJob job;
  const std::uint64_t* replay_position;
};

void runFill(const void* args) {
  const auto& fill = *static_cast<const FillArgs*>(args);
  accel::detail::FillJob job = fill.job;
  if (fill.replay_position != nullptr) {
    job.seed = fill.replay_position[0];
    job.offset += fill.replay_position[1];
  }
  if (fill.replay_position == nullptr && fillJobIsBlockAligned(job)) {
    const bool vectors = fillGroupsStoreVectors(job);
    for (std::size_t group = 0; group < fillGroupCount(job); ++group)
      storeFillGroupOfKind(job, group, vectors);
    return;
  }
  std::vector<unsigned char> staging(kFillStagingBytes);
  const std::size_t tiles = fillTileCount(job);
  for (std::size_t tile = 0; tile < tiles; ++tile) {
    for (unsigned thread = 0; thread < kFillThreads; ++thread) {
      stageFillChunk(job, tile, thread, staging.data());
    }
    for (unsigned thread = 0; thread < kFillThreads; ++thread) {
      storeFillTile(job, tile, thread, staging.data());
    }
  }
}

void runWrite(const void* args) {
  const auto& writes = *static_cast<const PhiloxWrites*>(args);
  for (unsigned i = 0; i < writes.count; ++i) {
    writes.slot[i][0] = writes.seed[i];
    writes.slot[i][1] = writes.offset[i];
  }
}

}  // namespace

cudaError_t launchFillTilesKernel(const accel::detail::FillJob& job, std::size_t,
                                  unsigned, const std::uint64_t* replay_position,
                                  cudaStream_t stream) noexcept {
  const FillArgs args{job, replay_position};
  // The kernel writes its outputs and, when captured, reads its Philox slot.
  const cuda_double_range memory[] = {
      {job.out, job.count * accel::detail::fillElementBytes(job)},
      {replay_position, replay_position != nullptr ? 2 * sizeof(std::uint64_t) : 0}};
  return cuda_double_launch(stream, runFill, &args, sizeof args, memory, 2);
}

cudaError_t launchFillGroupsKernel(const accel::detail::FillJob& job, std::size_t,
                                   unsigned, bool, cudaStream_t stream) noexcept {
  const FillArgs args{job, nullptr};
  const cuda_double_range memory[] = {
      {job.out, job.count * accel::detail::fillElementBytes(job)}};
  return cuda_double_launch(stream, runFill, &args, sizeof args, memory, 1);
}

cudaError_t launchWritePhiloxKernel(const PhiloxWrites& writes,
                                    cudaStream_t stream) noexcept {
  // The kernel writes each slot.
  cuda_double_range memory[PhiloxWrites::kMax];
  for (unsigned i = 0; i < writes.count; ++i)
    memory[i] = {writes.slot[i], 2 * sizeof(std::uint64_t)};
  return cuda_double_launch(stream, runWrite, &writes, sizeof writes, memory,
                            writes.count);
}

}  // namespace accel::cuda::detail

// The fill kernels on the runtime double: the kernel's own steps
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

struct WriteArgs {
  std::uint64_t* position;
  std::uint64_t seed;
  std::uint64_t offset;
};

void runWrite(const void* args) {
  const auto& write = *static_cast<const WriteArgs*>(args);
  write.position[0] = write.seed;
  write.position[1] = write.offset;
}

}  // namespace

cudaError_t launchFill(const accel::detail::FillJob& job,
                       const std::uint64_t* replay_position,
                       cudaStream_t stream) noexcept {
  if (fillTileCount(job) == 0) return cudaSuccess;
  const FillArgs args{job, replay_position};
  return cuda_double_launch(stream, runFill, &args, sizeof args, job.out,
                            job.count * accel::detail::fillElementBytes(job));
}

cudaError_t launchWritePhilox(std::uint64_t* position, std::uint64_t seed,
                              std::uint64_t offset, cudaStream_t stream) noexcept {
  const WriteArgs args{position, seed, offset};
  return cuda_double_launch(stream, runWrite, &args, sizeof args, position,
                            2 * sizeof(std::uint64_t));
}

}  // namespace accel::cuda::detail

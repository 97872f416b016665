// How the CUDA fill kernel splits a fill over threads: the only code of the
// kernel that is not shared with the host fills.
//
// Chunk c of a job is elements [c * E, (c + 1) * E) with E = 16 outputs'
// worth of elements (one StreamReader refill: 4 Philox blocks); a thread
// computes whole chunks, so every normal pair stays in one thread. A block of
// kFillThreads threads fills a tile of kFillThreads chunks in two steps:
//   1. stage: thread t computes chunk t of the tile into shared memory;
//   2. store: in round k (0 <= k < E), thread t copies element
//      k * kFillThreads + t of the tile to global memory,
// so in every store instruction consecutive threads write consecutive
// elements (coalesced), where writing each thread's own chunk would have a
// warp touch 32 places E elements apart. Compiled by nvcc for the kernel and
// by the host compiler for the test (and the runtime double) that runs the
// same steps on the host and compares with accel::fill*.
//
// Thread-safety: pure functions; threads of a tile stage disjoint parts of
// the staging buffer and store disjoint elements.
#pragma once

#include <cstddef>
#include <cstdint>

#include "accel/host_device.h"
#include "accel/random_fill_elements.h"

namespace accel::cuda::detail {

// Threads per block, and chunks per tile.
inline constexpr unsigned kFillThreads = 256;
// The largest chunk: 16 elements of 8 bytes.
inline constexpr std::size_t kFillChunkBytes = 16 * 8;
// Shared memory a block stages one tile in (32 KiB).
inline constexpr std::size_t kFillStagingBytes = kFillThreads * kFillChunkBytes;

// Elements per chunk for a fill of `kind`: 16 outputs' worth, so 16 of the
// kinds that take one output an element and 8 of those that take two (even,
// as normal pairs need). fillOutputs of one pair of elements says which.
ACCEL_HOST_DEVICE constexpr std::size_t fillChunkElements(FillKind kind) noexcept {
  return static_cast<std::size_t>(16 / (fillOutputs(kind, 2) / 2));
}

static_assert(fillChunkElements(FillKind::Uint32) == 16 &&
              fillChunkElements(FillKind::NormalFloat) == 16 &&
              fillChunkElements(FillKind::Bernoulli) == 16);
static_assert(fillChunkElements(FillKind::Uint64) == 8 &&
              fillChunkElements(FillKind::UniformDouble) == 8 &&
              fillChunkElements(FillKind::NormalDouble) == 8);
static_assert(16 * 4 <= kFillChunkBytes && 8 * 8 <= kFillChunkBytes);

ACCEL_HOST_DEVICE constexpr std::size_t fillTileElements(
    const accel::detail::FillJob& job) noexcept {
  return kFillThreads * fillChunkElements(job.kind);
}

ACCEL_HOST_DEVICE constexpr std::size_t fillTileCount(
    const accel::detail::FillJob& job) noexcept {
  const std::size_t per = fillTileElements(job);
  return (job.count + per - 1) / per;
}

// Step 1: thread `thread` computes its chunk of tile `tile` into `staging`
// (kFillStagingBytes, the tile's elements in order; nothing past the job's
// end).
ACCEL_HOST_DEVICE inline void stageFillChunk(const accel::detail::FillJob& job,
                                             std::size_t tile, unsigned thread,
                                             unsigned char* staging) noexcept {
  const std::size_t per = fillChunkElements(job.kind);
  const std::size_t inTile = thread * per;
  const std::size_t first = tile * fillTileElements(job) + inTile;
  if (first >= job.count) return;
  const std::size_t left = job.count - first;
  accel::detail::fillElementsInto<accel::detail::BlockStreamReader>(
      job, first, left < per ? left : per,
      staging + inTile * accel::detail::fillElementBytes(job));
}

// The tile element thread `thread` stores in round `round` of step 2.
ACCEL_HOST_DEVICE constexpr std::size_t storedTileElement(unsigned round,
                                                          unsigned thread) noexcept {
  return static_cast<std::size_t>(round) * kFillThreads + thread;
}

// Step 2 (after every thread of the tile staged): thread `thread` copies its
// elements of tile `tile` from `staging` to job.out.
ACCEL_HOST_DEVICE inline void storeFillTile(const accel::detail::FillJob& job,
                                            std::size_t tile, unsigned thread,
                                            const unsigned char* staging) noexcept {
  const std::size_t tileFirst = tile * fillTileElements(job);
  const std::size_t bytes = accel::detail::fillElementBytes(job);
  const auto rounds = static_cast<unsigned>(fillChunkElements(job.kind));
  auto* out = static_cast<unsigned char*>(job.out);
  for (unsigned round = 0; round < rounds; ++round) {
    const std::size_t element = storedTileElement(round, thread);
    if (tileFirst + element >= job.count) return;
    const std::size_t at = (tileFirst + element) * bytes;
    // One typed store per element (the sizes are 1, 4 and 8).
    if (bytes == 8) {
      *reinterpret_cast<std::uint64_t*>(out + at) =
          *reinterpret_cast<const std::uint64_t*>(staging + element * 8);
    } else if (bytes == 4) {
      *reinterpret_cast<std::uint32_t*>(out + at) =
          *reinterpret_cast<const std::uint32_t*>(staging + element * 4);
    } else {
      out[at] = staging[element];
    }
  }
}

}  // namespace accel::cuda::detail

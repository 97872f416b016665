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
// The fast path, for a job whose first output is the first word of a Philox
// block (offset a multiple of 4) and no replay position: group g is the
// elements drawn from block offset / 4 + g (4 elements of the kinds that take
// one output an element, 2 of those that take two), which a thread computes
// in registers with PhiloxBlockReader and writes with one 16-byte store when
// the output is 16-byte aligned. Consecutive threads write consecutive 16
// bytes, with no staging and no per-element index arithmetic (1.45x the
// tiles' speed on an H200: docs/cuda.md). The tiles stay for the other offsets and for
// captured fills, whose offset is read on the device.
//
// Thread-safety: pure functions; threads of a tile stage disjoint parts of
// the staging buffer and store disjoint elements; groups are disjoint.
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

// Elements of one group: the elements 4 outputs give.
ACCEL_HOST_DEVICE constexpr std::size_t fillGroupElements(FillKind kind) noexcept {
  return fillChunkElements(kind) / 4;
}

// Whether the fast path applies: element 0 reads the first word of a block.
ACCEL_HOST_DEVICE constexpr bool fillJobIsBlockAligned(
    const accel::detail::FillJob& job) noexcept {
  return job.offset % 4 == 0;
}

ACCEL_HOST_DEVICE constexpr std::size_t fillGroupCount(
    const accel::detail::FillJob& job) noexcept {
  const std::size_t per = fillGroupElements(job.kind);
  return (job.count + per - 1) / per;
}

// Whether every whole group's 16 bytes start 16-byte aligned (a group of 1-byte
// elements is 4 bytes, stored element by element).
inline bool fillGroupsStoreVectors(const accel::detail::FillJob& job) noexcept {
  return fillGroupElements(job.kind) * accel::detail::fillElementBytes(job) == 16 &&
         reinterpret_cast<std::uintptr_t>(job.out) % 16 == 0;
}

// The 16 bytes of one group, 16-byte aligned so that a GPU stores them at once.
struct alignas(16) FillGroupBytes {
  std::uint32_t words[4];
};

// Writes group `group` of a block-aligned `job` of kind Kind (a template
// parameter, so that the per-element switch folds away); `vectors` is
// fillGroupsStoreVectors(job).
template <FillKind Kind>
ACCEL_HOST_DEVICE inline void storeFillGroup(accel::detail::FillJob job,
                                             std::size_t group, bool vectors) noexcept {
  job.kind = Kind;
  constexpr std::size_t per = fillGroupElements(Kind);
  const std::size_t first = group * per;
  const std::size_t bytes = accel::detail::fillElementBytes(job);
  unsigned char* dest = static_cast<unsigned char*>(job.out) + first * bytes;
  if (job.count - first < per) {  // the last group, short
    accel::detail::fillElementsInto<accel::detail::BlockStreamReader>(
        job, first, job.count - first, dest);
    return;
  }
  FillGroupBytes group_bytes;
  accel::detail::fillElementsInto<accel::detail::PhiloxBlockReader>(job, first, per,
                                                                    &group_bytes);
  if (vectors) {
    *reinterpret_cast<FillGroupBytes*>(dest) = group_bytes;
    return;
  }
  // Element by element, each with its own type's alignment.
  const auto* from = reinterpret_cast<const unsigned char*>(&group_bytes);
  for (std::size_t i = 0; i < per; ++i) {
    if (bytes == 8) {
      reinterpret_cast<std::uint64_t*>(dest)[i] =
          reinterpret_cast<const std::uint64_t*>(from)[i];
    } else if (bytes == 4) {
      reinterpret_cast<std::uint32_t*>(dest)[i] =
          reinterpret_cast<const std::uint32_t*>(from)[i];
    } else {
      dest[i] = from[i];
    }
  }
}

// storeFillGroup for the job's kind, chosen at run time: what the kernel's
// launcher chooses per launch, for the host programs that run the groups
// (the runtime double, the tests).
inline void storeFillGroupOfKind(const accel::detail::FillJob& job, std::size_t group,
                                 bool vectors) noexcept {
  switch (job.kind) {
    case FillKind::Uint32:
      return storeFillGroup<FillKind::Uint32>(job, group, vectors);
    case FillKind::Uint64:
      return storeFillGroup<FillKind::Uint64>(job, group, vectors);
    case FillKind::UniformFloat:
      return storeFillGroup<FillKind::UniformFloat>(job, group, vectors);
    case FillKind::UniformDouble:
      return storeFillGroup<FillKind::UniformDouble>(job, group, vectors);
    case FillKind::NormalFloat:
      return storeFillGroup<FillKind::NormalFloat>(job, group, vectors);
    case FillKind::NormalDouble:
      return storeFillGroup<FillKind::NormalDouble>(job, group, vectors);
    case FillKind::Bernoulli:
      return storeFillGroup<FillKind::Bernoulli>(job, group, vectors);
  }
}

}  // namespace accel::cuda::detail

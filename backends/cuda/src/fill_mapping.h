// How the CUDA fill kernel splits a fill over threads: the only code of the
// kernel that is not shared with the host fills.
//
// Chunk c of a job is elements [c * E, (c + 1) * E) with E = 16 outputs'
// worth of elements (one StreamReader refill: 4 Philox blocks); a thread
// writes whole chunks, so every normal pair stays in one thread. Compiled by
// nvcc for the kernel and by the host compiler for the test that runs every
// chunk on the host and compares with accel::fill*.
//
// Thread-safety: pure functions; chunks write disjoint elements.
#pragma once

#include <cstddef>

#include "accel/host_device.h"
#include "accel/random_fill_elements.h"

namespace accel::cuda::detail {

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

ACCEL_HOST_DEVICE constexpr std::size_t fillChunkCount(
    const accel::detail::FillJob& job) noexcept {
  const std::size_t per = fillChunkElements(job.kind);
  return (job.count + per - 1) / per;
}

// Writes chunk `chunk` of `job` (nothing past the end).
ACCEL_HOST_DEVICE inline void fillChunk(const accel::detail::FillJob& job,
                                        std::size_t chunk) noexcept {
  const std::size_t per = fillChunkElements(job.kind);
  const std::size_t first = chunk * per;
  if (first >= job.count) return;
  const std::size_t left = job.count - first;
  accel::detail::fillElements(job, first, left < per ? left : per);
}

}  // namespace accel::cuda::detail

// Where a captured fill's random numbers come from: device memory the graph
// reads at replay, so that every replay draws new numbers, as an uncaptured
// fill run again would.
//
// A fill enqueued outside a capture claims its outputs from the generator at
// once and passes (seed, offset) to the kernel by value. A fill captured into
// one of the backend's graphs cannot: the kernel's arguments are frozen in
// the graph, and every replay would write the same numbers. Instead, each
// (graph, generator) pair gets a slot of device memory, [seed, base offset];
// a captured fill passes the slot's address and its offset inside the graph
// (the outputs the capture's earlier fills of that generator took) and the
// kernel draws from (slot seed, slot base + offset in graph). Before each
// replay, the backend claims the graph's whole draw from each generator
// (reservePhilox, in program order like any fill) and writes the position
// into the slot with a one-thread kernel on the replay stream, ahead of the
// graph in stream order. PyTorch's CUDA graphs do the same with
// philox_cuda_state (a seed and an offset read from device memory).
//
// The generator does not move during the capture (nothing runs then); each
// replay moves it by the graph's total. A graph's replays share its slots:
// replays of one graph on two streams at once may read each other's
// position; replay a graph on one stream at a time (as with its memory).
//
// Thread-safety: thread-safe (one mutex around the captures' slots).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "accel/allocator.h"
#include "accel/generator.h"
#include "accel/stream.h"

namespace accel::cuda::detail {

// The Philox slots of one graph: made during its capture, used by its replays.
class CapturedPhilox {
 public:
  struct Slot {
    Generator generator;
    DataPtr state;              // two uint64: seed, base offset
    std::uint64_t outputs = 0;  // the graph's draw per replay
  };

  // Claims each slot's outputs from its generator and writes the position
  // into the slot on `stream` (the device's context current). Throws what
  // reservePhilox and the launch throw.
  void advance(cudaStream_t stream);
  [[nodiscard]] bool empty() const noexcept { return slots_.empty(); }

  std::vector<Slot> slots_;
};

// A capture with CUDA's id `capture_id` began under a graph of the backend:
// fills captured into it read their position from slots. Throws bad_alloc.
void capturedPhiloxBegan(unsigned long long capture_id);

// The capture ended (or was abandoned): its slots, for the graph to keep.
// Never throws.
[[nodiscard]] CapturedPhilox capturedPhiloxEnded(unsigned long long capture_id) noexcept;

// A position for a fill of `outputs` outputs from `generator` on `stream`
// (CUDA stream `native`, device's context current):
//  - not capturing: claims the outputs now; returns null and sets *seed and
//    *offset;
//  - capturing under a graph of the backend: returns the device address of
//    the (graph, generator) slot (allocated on first use, from the graph's
//    pool) and sets *offset to the fill's offset inside the graph; *seed is
//    unused.
// A capture the backend did not begin (cudaStreamBeginCapture called on a
// wrapped stream directly) is treated as not capturing: its graph replays
// the same numbers. Throws what reservePhilox, CUDA and the allocator throw.
const std::uint64_t* claimFillPosition(cudaStream_t native, Stream stream,
                                       const Generator& generator, std::uint64_t outputs,
                                       std::uint64_t* seed, std::uint64_t* offset);

}  // namespace accel::cuda::detail

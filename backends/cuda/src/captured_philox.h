// Where a captured fill's random numbers come from: device memory the graph
// reads at replay, so that every replay draws new numbers, as an uncaptured
// fill run again would.
//
// The bookkeeping (a slot of [seed, base offset] per graph and generator,
// each fill's offset inside the graph, the draws claimed in program order
// at each replay) is the kit's (accel/kit/captured_philox.h), shared with
// the OpenCL and openreg backends. What is CUDA's: the captures are found
// by CUDA's capture id; a slot comes from the capture's private pool
// (routed by capture, so that it lives until the graph is reset); a
// captured fill passes the slot's address and its offset to the kernel;
// before each replay a one-thread kernel writes the position into the slot
// on the replay stream, ahead of the graph in stream order.
//
// A graph's replays share its slots: replays of one graph on two streams at
// once may read each other's position; replay a graph on one stream at a
// time (as with its memory).
//
// Thread-safety: thread-safe (one mutex around the captures, and the kit's
// around each graph's slots).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>

#include "accel/adapter/core.h"
#include "accel/generator.h"
#include "accel/kit/captured_philox.h"
#include "accel/stream.h"

namespace accel::cuda::detail {

// Claims the graph's draws from their generators and writes each position
// into its slot on `stream` (the device's context current). Throws what
// reservePhilox and the launch throw.
void advanceCapturedPhilox(kit::CapturedPhilox& graph, cudaStream_t stream);

// A capture with CUDA's id `capture_id` began under a graph of the backend:
// fills captured into it read their position from slots. Throws bad_alloc.
void capturedPhiloxBegan(unsigned long long capture_id);

// The capture ended (or was abandoned): its slots, for the graph to keep
// (null when the capture drew nothing or was never begun). Never throws.
[[nodiscard]] std::shared_ptr<kit::CapturedPhilox> capturedPhiloxEnded(
    unsigned long long capture_id) noexcept;

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
const std::uint64_t* claimFillPosition(cudaStream_t native, adapter::Stream stream,
                                       const Generator& generator, std::uint64_t outputs,
                                       std::uint64_t* seed, std::uint64_t* offset);

}  // namespace accel::cuda::detail

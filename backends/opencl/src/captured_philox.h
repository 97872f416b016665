// Where a captured fill's random numbers come from: device memory that each
// replay of its graph writes first, so that every replay draws new numbers,
// as running the fills again would (as the CUDA backend's graphs do;
// PyTorch's philox_cuda_state).
//
// The bookkeeping (a slot of [seed, base offset] per graph and generator,
// each fill's offset inside the graph, the draws claimed in program order at
// each replay) is the kit's (accel/kit/captured_philox.h), shared with the
// CUDA and openreg backends; each Recording holds one. What is OpenCL's: a
// slot is SVM from the capture's private pool; a captured fill passes the
// slot's address and its offset to the fill.cl kernels' "_captured"
// variants, which draw from (slot seed, slot base + offset in graph); before
// each replay, graphReplay enqueues the write of each position
// (clEnqueueSVMMemFill, whose 16-byte pattern is copied when it is
// enqueued) on the replay's queue ahead of the command buffer.
//
// The write waits for the graph's previous replay, wherever it runs: a
// replay pending on another queue still reads its own position (the replays
// of one graph are serialised on the device, as their shared memory
// requires anyway).
//
// Thread-safety: thread-safe (the kit's object has its own mutex).
#pragma once

#include <cstdint>

#include "accel/generator.h"
#include "accel/kit/captured_philox.h"
#include "accel/stream.h"
#include "cl_api.h"

namespace accel::opencl::detail {

// Where a fill of `outputs` outputs from `generator`, captured on `stream`
// into `graph`, draws from; a new slot is allocated on the stream (the
// capture routes it to its private pool). Throws what the kit and the
// allocator throw.
[[nodiscard]] kit::CapturedPhilox::Position claimCapturedPhilox(
    kit::CapturedPhilox& graph, const Generator& generator, std::uint64_t outputs,
    Stream stream);

// Claims the graph's draws from their generators and enqueues the write of
// each position on `queue` (of `device`), after `previous` (the graph's last
// replay, or null). Throws what reservePhilox throws, DeviceError when an
// enqueue fails.
void advanceCapturedPhilox(kit::CapturedPhilox& graph, cl_command_queue queue,
                           cl_event previous, DeviceIndex device);

}  // namespace accel::opencl::detail

// Where a captured fill's random numbers come from: device memory that each
// replay of its graph writes first, so that every replay draws new numbers,
// as running the fills again would (and as the CUDA backend's graphs do,
// backends/cuda/src/captured_philox.h; PyTorch's philox_cuda_state).
//
// A fill enqueued outside a capture claims its outputs from the generator at
// once and passes (seed, offset) to its kernel by value. A recorded kernel's
// arguments are frozen in the command buffer, so a captured fill cannot:
// each (graph, generator) pair gets a slot of device memory, [seed, base
// offset], from the capture's private pool; a captured fill passes the
// slot's address and its offset inside the graph (the outputs the capture's
// earlier fills of that generator took) to the fill.cl kernels' "_captured"
// variants, which draw from (slot seed, slot base + offset in graph). Before
// each replay, graphReplay claims the graph's whole draw from each generator
// (reservePhilox, in program order like any fill) and enqueues the write of
// the position (clEnqueueSVMMemFill, whose 16-byte pattern is copied when it
// is enqueued) on the replay's queue ahead of the command buffer.
//
// The generator does not move during the capture (nothing runs then); each
// replay moves it by the graph's total. The write waits for the graph's
// previous replay, wherever it runs: a replay pending on another queue
// still reads its own position (the replays of one graph are serialised on
// the device, as their shared memory requires anyway).
//
// Thread-safety: thread-safe (one mutex around the slots). Lifetime: the
// slots' memory lives as long as this object; the owner (the graph's
// recording) must outlive the replays that read it.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "accel/allocator.h"
#include "accel/generator.h"
#include "accel/stream.h"
#include "cl_api.h"

namespace accel::opencl::detail {

class CapturedPhilox {
 public:
  struct Position {
    const std::uint64_t* slot;  // device memory: seed, base offset
    std::uint64_t offset;       // the fill's offset inside the graph
  };

  // Where a fill of `outputs` outputs from `generator`, captured on `stream`,
  // draws from: the (graph, generator) slot, allocated on the stream on
  // first use (the capture routes it to its private pool), and the outputs
  // the graph took from that generator before. Adds `outputs` to the
  // graph's draw. Throws what the allocator throws.
  [[nodiscard]] Position claim(const Generator& generator, std::uint64_t outputs,
                               Stream stream);

  // Claims each slot's draw from its generator and enqueues the write of
  // the position on `queue` (of `device`), after `previous` (the graph's
  // last replay, or null). Throws what reservePhilox throws, DeviceError
  // when the enqueue fails.
  void advance(cl_command_queue queue, cl_event previous, DeviceIndex device);

 private:
  struct Slot {
    Generator generator;
    DataPtr state;  // two uint64: seed, base offset
    std::uint64_t outputs = 0;
  };

  std::mutex mutex_;
  std::vector<Slot> slots_;
};

}  // namespace accel::opencl::detail

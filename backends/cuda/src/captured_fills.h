// Where a captured fill's random numbers come from: device memory the graph
// reads at replay, so that every replay draws new numbers, as an uncaptured
// fill run again would.
//
// The bookkeeping (a slot per captured fill, the generators kept alive, the
// draws claimed in capture order at each replay) is the adapter's
// (accel/adapter/captured_draws.h), shared with the OpenCL and openreg
// backends. What is CUDA's: the captures are found by CUDA's capture id; a
// slot is two words of device memory ({seed, offset}, in chunks the backend's
// memory allocates, kept until the graph is reset); a captured fill passes
// its slot's address to the kernel; before each replay a one-thread kernel
// writes each slot's position on the replay stream, ahead of the graph in
// stream order.
//
// Thread-safety: thread-safe (one mutex around the captures, and one around
// each graph's slots).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "accel/adapter/captured_draws.h"
#include "accel/adapter/core.h"

namespace accel::cuda::detail {

#pragma GCC visibility push(hidden)

// One graph's captured fills: their slots and draws. Owns the slots' memory.
class CapturedFills {
 public:
  explicit CapturedFills(std::int8_t device) noexcept : device_(device) {}
  ~CapturedFills();
  CapturedFills(const CapturedFills&) = delete;
  CapturedFills& operator=(const CapturedFills&) = delete;

  // A slot for a captured fill of `outputs` outputs of `generator` (kept
  // alive with the graph). Throws what CapturedDraws::claim throws,
  // OutOfMemory when the device has no room for the slot.
  [[nodiscard]] const std::uint64_t* claim(const adapter::Core& core,
                                           accel_generator* generator,
                                           std::uint64_t outputs);
  // Gives back a slot whose fill was not recorded after all. Never throws.
  void unclaim(const std::uint64_t* slot) noexcept;
  // Claims the draws of one replay (in capture order) and writes each
  // position into its slot on `stream` (the device's context current).
  // Throws what reservePhilox and the launch throw; what was claimed before
  // a failure stays claimed.
  void advance(const adapter::Core& core, cudaStream_t stream);
  [[nodiscard]] bool empty() const { return draws_.empty(); }

 private:
  static constexpr std::size_t kSlotsPerChunk = 256;

  const std::int8_t device_;
  adapter::CapturedDraws draws_;
  mutable std::mutex mutex_;
  struct Slot {
    std::shared_ptr<const adapter::PhiloxPosition> position;  // the claim
    std::uint64_t* words = nullptr;                           // in a chunk
  };
  // The slot of each claim, by the claim's host position.
  std::map<const adapter::PhiloxPosition*, Slot> slots_;
  std::vector<std::uint64_t*> chunks_;  // kSlotsPerChunk slots each
  std::size_t used_in_last_ = kSlotsPerChunk;
};

#pragma GCC visibility pop

// A capture with CUDA's id `capture_id` began under a graph of the backend
// on `device`: fills captured into it read their position from slots.
// Throws std::bad_alloc.
void capturedFillsBegan(unsigned long long capture_id, std::int8_t device);

// The capture ended (or was abandoned): its fills, for the graph to keep
// (null when the capture drew nothing or was never begun). Never throws.
[[nodiscard]] std::shared_ptr<CapturedFills> capturedFillsEnded(
    unsigned long long capture_id) noexcept;

// A position for a fill of `outputs` outputs from `generator` on `stream`
// (CUDA stream `native`, the device's context current):
//  - not capturing: reserves the outputs now; returns null and sets *from;
//  - capturing under a graph of the backend: returns the device address of
//    the fill's slot, which the kernel reads when it runs.
// A capture the backend did not begin (cudaStreamBeginCapture called on a
// wrapped stream directly) is treated as not capturing: its graph replays
// the same numbers. Throws what reservePhilox, CUDA and the slot's
// allocation throw.
const std::uint64_t* claimFillPosition(const adapter::Core& core, cudaStream_t native,
                                       adapter::Stream stream, accel_generator* generator,
                                       std::uint64_t outputs,
                                       adapter::PhiloxPosition* from);

}  // namespace accel::cuda::detail

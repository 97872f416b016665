// CapturedPhilox: the random draws of one graph's captured fills, so that
// every replay of the graph draws new numbers, as running the fills again
// would (PyTorch's CUDA graphs do the same with philox_cuda_state).
//
// A fill enqueued outside a capture claims its outputs from the generator at
// once (reservePhilox) and hands (seed, offset) to its kernel by value. A
// captured kernel's arguments are frozen in the graph, so a captured fill
// cannot: each (graph, generator) pair gets a slot of device memory,
// [seed, base offset], and a captured fill hands its kernel the slot's
// address and its offset inside the graph (the outputs the graph's earlier
// fills of that generator took). The kernel draws from (slot seed, slot base
// + offset in graph). Before each replay, the backend claims the graph's
// whole draw from each generator, in program order like any fill, and writes
// each slot ahead of the graph in stream order:
//
//   // capturing a fill of `outputs` outputs on `stream`:
//   const kit::CapturedPhilox::Position at = graph.philox.claim(
//       generator, outputs, [&] { return allocator.allocate(device,
//                                   kit::CapturedPhilox::kSlotBytes, stream); });
//   launchCapturedFill(..., at.slot, at.offset);
//   // replaying:
//   graph.philox.advance([&](void* slot, PhiloxPosition from) {
//     enqueueWrite(stream, slot, from.seed, from.offset);  // the device's way
//   });
//
// This class keeps the bookkeeping (which generators a graph draws from, how
// much, and in which order they are claimed at replay); the backend keeps
// what is device-specific: where a slot's memory comes from (the capture's
// private pool, so that it lives as long as the graph) and how it is written
// (a kernel, a fill command, an operation on the stream).
//
// The generators do not move during the capture (nothing runs then); each
// replay moves each one by the graph's draw from it. Replays of one graph
// share its slots: two replays pending at once must be ordered by the
// backend (or the graph replayed on one stream at a time).
//
// Thread-safety: every member is thread-safe (one mutex; claim's allocation
// and advance's writes run under it only as stated there).
// Lifetime: owns its slots' memory; a backend keeps it with the graph and
// drops it with the graph's other captured memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "accel/allocator.h"
#include "accel/export.h"
#include "accel/generator.h"
#include "accel/philox.h"

namespace accel::kit {

class ACCEL_API CapturedPhilox {
 public:
  // A slot: two uint64, the seed then the base offset.
  static constexpr std::size_t kSlotWords = 2;
  static constexpr std::size_t kSlotBytes = kSlotWords * sizeof(std::uint64_t);

  // Where a captured fill draws from at each replay.
  struct Position {
    const std::uint64_t* slot;  // device memory: seed, base offset
    std::uint64_t offset;       // the fill's offset inside the graph
  };

  CapturedPhilox() = default;
  CapturedPhilox(const CapturedPhilox&) = delete;
  CapturedPhilox& operator=(const CapturedPhilox&) = delete;
  ~CapturedPhilox();

  // Records a captured fill of `outputs` outputs from `generator`: returns
  // the (graph, generator) slot and the outputs the graph took from that
  // generator before this fill, and adds `outputs` to the graph's draw.
  // On the generator's first fill, `allocate` makes the slot (at least
  // kSlotBytes, 8-byte aligned); it runs without the lock (an allocator may
  // call back into its caller), and if another thread made the slot
  // meanwhile, its memory goes back. Throws InvalidArgument for an undefined
  // generator or when the graph's draw would pass 2^64 - 1, what `allocate`
  // throws, and InvalidArgument when it returns no memory; the graph's draw
  // is unchanged then.
  [[nodiscard]] Position claim(const Generator& generator, std::uint64_t outputs,
                               const std::function<DataPtr()>& allocate);

  // For one replay: claims each generator's draw (reservePhilox, in the
  // order the capture first drew from them) and calls write(slot, from) for
  // its slot, under the lock (so replays of the graph claim and write in one
  // order). Throws what reservePhilox and `write` throw; the generators
  // claimed before the throw stay advanced (a failed replay keeps what it
  // claimed), and the writes made before it stand: the backend orders them
  // as it orders a whole replay's.
  void advance(const std::function<void(void* slot, PhiloxPosition from)>& write);

  // Whether no fill was captured (a replay has nothing to write).
  [[nodiscard]] bool empty() const;
  // The graph's draw from `generator` per replay (0 if it drew none).
  [[nodiscard]] std::uint64_t outputs(const Generator& generator) const;

 private:
  struct Slot {
    Generator generator;
    DataPtr state;
    std::uint64_t outputs = 0;
  };

  // The slot of `generator`, or null. mutex_ held.
  Slot* find(const Generator& generator);

  mutable std::mutex mutex_;
  std::vector<Slot> slots_;
};

}  // namespace accel::kit

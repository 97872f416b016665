// Host call stacks for memory history: captured cheaply as return addresses
// when an event is recorded, symbolised only when a snapshot is taken.
//
// Capturing walks the return addresses with cached unwind rules
// (frame_walk.h) into a small vector (no symbol lookup, no string);
// StackSymbolizer turns addresses into MemoryFrames with dladdr and the C++
// demangler and keeps the result per address, so a snapshot of many events
// from the same call sites looks each address up once.
//
// Thread-safety: captureStack is thread-safe. A StackSymbolizer is not; the
// allocator keeps one per device under the device's lock.
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "accel/memory_stats.h"

namespace accel::memory::detail {

// A host-language stack (unresolved) and the C++ return addresses.
struct StackRecord {
  std::shared_ptr<const HostStack> host;
  std::vector<void*> addresses;
};
using CapturedStack = std::shared_ptr<const StackRecord>;

// The return addresses of the caller's stack, innermost first, without the
// allocator's own frames (skip counts those) when `native`, with `host` (the
// host stack captured before the lock, or null). Null when there is neither.
[[nodiscard]] CapturedStack captureStack(int skip, bool native = true,
                                         std::shared_ptr<const HostStack> host = nullptr);

// The host frames of every block and trace entry put before their C++ frames
// (MemoryBlock::host_stack, MemoryTraceEntry::host_stack), without any
// allocator lock held: resolving may take the host's lock.
void resolveHostStacks(MemorySnapshot& snapshot);

class StackSymbolizer {
 public:
  // The C++ frames of `stack` (its host part is resolved later, unlocked).
  [[nodiscard]] std::vector<MemoryFrame> symbolize(const CapturedStack& stack);

 private:
  const MemoryFrame& frameFor(void* address);
  std::unordered_map<void*, MemoryFrame> cache_;
};

}  // namespace accel::memory::detail

// Internal: the validation layer's view of memory made through the hooks'
// allocators while it is on: the live blocks (for copies' and pointer
// queries' checks and the leak report) and the quarantine of freed ones.
//
// A freed block's memory is held back in the quarantine, so that its
// address is not handed out again while a late use may come, and such a use
// is caught as a use after free with where it was freed. The quarantine is
// bounded by a count of blocks and a number of bytes (QuarantineLimits);
// past either, the oldest block goes back to its allocator (releaseHeldFree)
// and is forgotten: once its memory may be reused (by any allocator, host
// memory by anything in the process) nothing more can be said of its range.
//
// Thread-safety: not thread-safe; the validation layer holds its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "accel/device.h"
#include "memory/stack_capture.h"

namespace accel::detail {

using memory::detail::CapturedStack;

struct QuarantineLimits {
  std::size_t blocks = 1024;
  std::size_t bytes = std::size_t{256} << 20;  // 256 MiB
};

struct TrackedBlock {
  std::uintptr_t base = 0;
  std::size_t bytes = 0;
  DeviceType type{};
  Device device;  // the allocator's device (CPU for pinned memory)
  bool pinned = false;
  CapturedStack made;           // where it was allocated
  CapturedStack freed;          // where it was freed (freed blocks)
  const void* token = nullptr;  // the free held back, while held
};

class TrackedMemory {
 public:
  void setLimits(QuarantineLimits limits) noexcept { limits_ = limits; }

  // A new live block.
  void allocated(TrackedBlock block);
  // The free of the live block at `base`. Held: it went to the quarantine,
  // and the tokens of older frees pushed out of it were appended to
  // `release` (give them back after unlocking). NotHeld: the quarantine
  // holds nothing (limits of 0), the block is forgotten and its free goes
  // on now. NotLive: no live block starts at base (freed twice, or
  // allocated before the layer was on); nothing changed.
  enum class Free : std::uint8_t { Held, NotHeld, NotLive };
  Free freed(std::uintptr_t base, CapturedStack where, const void* token,
             std::vector<const void*>& release);
  // The quarantined block that starts at `base` (a second free of an
  // allocation whose first free the quarantine holds), null if none.
  [[nodiscard]] const TrackedBlock* heldAt(std::uintptr_t base) const noexcept;

  // The live block holding address `ptr`, or the quarantined one; null if none.
  [[nodiscard]] const TrackedBlock* live(std::uintptr_t ptr) const noexcept;
  [[nodiscard]] const TrackedBlock* freedBlock(std::uintptr_t ptr) const noexcept;

  // Gives every held free back (to `release`) and forgets everything.
  void clear(std::vector<const void*>& release);

  [[nodiscard]] const std::map<std::uintptr_t, TrackedBlock>& liveBlocks()
      const noexcept {
    return live_;
  }
  // Calls `visit` with each live block (which may change its stacks).
  template <typename Visit>
  void forEachLive(Visit&& visit) {
    for (auto& [base, block] : live_) visit(block);
  }

 private:
  static const TrackedBlock* holding(const std::map<std::uintptr_t, TrackedBlock>& blocks,
                                     std::uintptr_t ptr) noexcept;
  // Stops holding `block` back: its token goes to `release`.
  void letGo(TrackedBlock& block, std::vector<const void*>& release) noexcept;
  void forget(std::map<std::uintptr_t, TrackedBlock>::iterator it,
              std::vector<const void*>& release);

  QuarantineLimits limits_;
  std::map<std::uintptr_t, TrackedBlock> live_;
  std::map<std::uintptr_t, TrackedBlock> freed_;
  std::deque<std::uintptr_t> held_order_;  // oldest first; may name forgotten ones
  std::size_t held_blocks_ = 0;
  std::size_t held_bytes_ = 0;
};

}  // namespace accel::detail

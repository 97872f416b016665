// Internal: the validation layer's view of memory made through the hooks'
// allocators while it is on: the live blocks (for copies' and pointer
// queries' checks and the leak report) and the quarantine, where freed
// blocks wait a while before their memory goes back, so that a late use of
// the range is caught as a use after free with where it was freed.
//
// The quarantine is bounded by a count of blocks and a number of bytes
// (QuarantineLimits); past either, the oldest block leaves it and its
// memory goes back to its allocator (releaseHeldFree).
//
// Thread-safety: not thread-safe; the validation layer holds its lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
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
  CapturedStack freed;          // where it was freed (quarantined blocks)
  const void* token = nullptr;  // the free held back (quarantined blocks)
};

class TrackedMemory {
 public:
  void setLimits(QuarantineLimits limits) noexcept { limits_ = limits; }

  void allocated(TrackedBlock block);
  // The free of the live block at `base`: it moves to the quarantine, and
  // the tokens of blocks pushed out of it are appended to `release` (give
  // them back after unlocking). False when no live block starts at base
  // (freed twice, or allocated before the layer was on): `release` is
  // untouched, the block stays where it is.
  bool freed(std::uintptr_t base, CapturedStack where, const void* token,
             std::vector<const void*>& release);
  // The quarantined block that starts at `base`, null if none (a second
  // free of a block already freed).
  [[nodiscard]] const TrackedBlock* quarantinedAt(std::uintptr_t base) const noexcept;

  // The live block holding address `ptr`, or the quarantined one; null if none.
  [[nodiscard]] const TrackedBlock* live(std::uintptr_t ptr) const noexcept;
  [[nodiscard]] const TrackedBlock* quarantined(std::uintptr_t ptr) const noexcept;

  // Empties the quarantine; its tokens go to `release`.
  void drain(std::vector<const void*>& release);
  // Forgets every live block (the layer is turned off).
  void forgetLive() noexcept { live_.clear(); }

  [[nodiscard]] const std::map<std::uintptr_t, TrackedBlock>& liveBlocks()
      const noexcept {
    return live_;
  }

 private:
  static const TrackedBlock* holding(const std::map<std::uintptr_t, TrackedBlock>& blocks,
                                     std::uintptr_t ptr) noexcept;

  QuarantineLimits limits_;
  std::map<std::uintptr_t, TrackedBlock> live_;
  std::map<std::uintptr_t, TrackedBlock> quarantine_;
  std::deque<std::uintptr_t> quarantine_order_;  // oldest first
  std::size_t quarantine_bytes_ = 0;
};

}  // namespace accel::detail

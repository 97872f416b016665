// Internal: the validation layer's view of memory made through the hooks'
// allocators while it is on: the live blocks (for copies' and pointer
// queries' checks and the leak report) and the quarantine of freed ones.
//
// A live block's record (LiveRecord) is kept in the decorator's block, in
// the layer's note on it (layers/block_note.h), so an allocation and its
// free only link and unlink the record: no node is allocated, nothing is
// sorted. The ordered index by address that the rules need (a copy's or a
// pointer query's pointer may point inside a block) is built lazily: a new
// record waits on a list until a rule next looks an address up, which files
// every waiting record in the index then. A block freed before any lookup
// (most of a program's short-lived blocks) never enters the index.
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
// Lifetime: a record lives in its block's note from allocated() until the
// free (freed()) or clear(), whichever comes first; the books never reach a
// record after that (the block may be recycled).
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

// A live block as the books keep it, in the block's note.
struct LiveRecord {
  // Member by member: a brace-initialised record is zeroed whole first
  // (a `rep stos`, a third of the layer's allocation callback).
  LiveRecord(std::uintptr_t base, std::size_t bytes, DeviceType type, Device device,
             bool pinned) noexcept {
    block.base = base;
    block.bytes = bytes;
    block.type = type;
    block.device = device;
    block.pinned = pinned;
  }

  TrackedBlock block;
  // The books it is in (TrackedMemory's generation); 0 once it left them.
  std::uint64_t books = 0;
  bool indexed = false;        // in the index; else on the waiting list
  LiveRecord* prev = nullptr;  // on the waiting list
  LiveRecord* next = nullptr;
};

class TrackedMemory {
 public:
  void setLimits(QuarantineLimits limits) noexcept { limits_ = limits; }

  // A new live block, its record constructed by the caller (who keeps it
  // alive until freed() or clear()). Never throws.
  void allocated(LiveRecord& record) noexcept;
  // The free of the live block of `record`. Held: it went to the
  // quarantine, and the tokens of older frees pushed out of it were
  // appended to `release` (give them back after unlocking). NotHeld: the
  // quarantine holds nothing (limits of 0), the block is forgotten and its
  // free goes on now. NotLive: the record is in no books of now (made
  // before clear()); nothing changed. The record leaves the books in the
  // first two cases, even when this throws (std::bad_alloc, from the
  // quarantine's books: the block is then forgotten, not held).
  enum class Free : std::uint8_t { Held, NotHeld, NotLive };
  Free freed(LiveRecord& record, CapturedStack where, const void* token,
             std::vector<const void*>& release);
  // The free of the live block of `record`, forgotten at once whatever the
  // quarantine's limits (the caller saw them hold nothing). False: the
  // record is in no books of now; nothing changed.
  bool forgetLive(LiveRecord& record) noexcept;
  // The quarantined block that starts at `base` (a second free of an
  // allocation whose first free the quarantine holds), null if none.
  [[nodiscard]] const TrackedBlock* heldAt(std::uintptr_t base) const noexcept;

  // The live block holding address `ptr`, or the quarantined one; null if
  // none. live() files the waiting records in the index first (throws
  // std::bad_alloc only; the records not filed then wait on).
  [[nodiscard]] const TrackedBlock* live(std::uintptr_t ptr);
  [[nodiscard]] const TrackedBlock* freedBlock(std::uintptr_t ptr) const noexcept;

  // Gives every held free back (to `release`) and forgets everything: the
  // records of live blocks leave the books (their frees find them NotLive).
  void clear(std::vector<const void*>& release);

  // Calls `visit` with each live block (which may change its stacks), in no
  // particular order.
  template <typename Visit>
  void forEachLive(Visit&& visit) {
    for (auto& [base, record] : index_) visit(record->block);
    for (LiveRecord* record = waiting_; record != nullptr; record = record->next)
      visit(record->block);
  }

 private:
  template <typename Blocks>
  static const TrackedBlock* holding(const Blocks& blocks, std::uintptr_t ptr) noexcept;
  // Files every waiting record in the index.
  void fileWaiting();
  // Takes `record` out of the waiting list or the index.
  void unlink(LiveRecord& record) noexcept;
  // Stops holding `block` back: its token goes to `release`.
  void letGo(TrackedBlock& block, std::vector<const void*>& release) noexcept;
  void forget(std::map<std::uintptr_t, TrackedBlock>::iterator it,
              std::vector<const void*>& release);

  QuarantineLimits limits_;
  std::uint64_t books_ = 1;  // a record's `books` while it is in these
  std::map<std::uintptr_t, LiveRecord*> index_;
  LiveRecord* waiting_ = nullptr;  // live records not in index_ yet, newest first
  std::map<std::uintptr_t, TrackedBlock> freed_;
  std::deque<std::uintptr_t> held_order_;  // oldest first; may name forgotten ones
  std::size_t held_blocks_ = 0;
  std::size_t held_bytes_ = 0;
};

}  // namespace accel::detail

// Internal: a layer's note on one allocation, kept inside the block the
// decorator's allocator makes for it (layered_allocator.h), so that the
// layer finds what it recorded at the allocation again at the free without
// a table of its own to look it up in (the validation layer's live blocks:
// docs/validation.md, "Measured cost").
//
// One layer at a time keeps notes (the first added whose keepsBlockNotes()
// is true, hook_layer.h): allocatedNoted() hands it the note of a new block,
// holdsFree() the note of a block it noted. The keeper constructs what it
// keeps in `storage` and sets `dispose`, which the decorator calls when the
// block's memory goes back to its allocator (the block is then recycled).
//
// Thread-safety: a note is the keeper's; the decorator touches it only when
// the block is made or goes back, when no other thread can reach it.
#pragma once

#include <cstddef>

namespace accel::detail {

struct BlockNote {
  static constexpr std::size_t kBytes = 112;
  // Ends what the keeper constructed in `storage`; null when nothing is.
  using Dispose = void (*)(BlockNote& note) noexcept;

  alignas(std::max_align_t) unsigned char storage[kBytes];
  Dispose dispose = nullptr;
  // The layer that noted the block (it alone is handed the note back).
  const void* keeper = nullptr;

  // Ends what the keeper kept, leaving the note empty. Never throws.
  void clear() noexcept {
    if (dispose != nullptr) dispose(*this);
    dispose = nullptr;
    keeper = nullptr;
  }
};

}  // namespace accel::detail

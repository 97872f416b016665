// PendingFrees: recording a freed block's events (pending_frees.h).
#include "memory/device_cache/pending_frees.h"

namespace accel::memory::detail {

// Cold: only a block that other streams used comes here.
[[gnu::noinline, gnu::cold]] void PendingFrees::recordFor(Block* block) noexcept {
  try {
    for (StreamId use : block->stream_uses) {
      events_.emplace_back(source_.recordEvent(Stream(device_, use)), block);
      ++block->event_count;
    }
  } catch (...) {
    // The count keeps one for the missing event, so the events that were
    // recorded cannot bring it to zero.
    ++block->event_count;
    return;
  }
  block->clearStreamUses();
}

}  // namespace accel::memory::detail

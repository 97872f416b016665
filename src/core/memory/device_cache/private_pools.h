// PrivatePools: a device's private memory pools (graph capture) and which
// streams allocate to them.
//
// A pool is created by its first retain and lives while it has users; a
// stream allocates to at most one pool at a time, from beginAllocating to
// endAllocating (several streams may share a pool: concurrent captures).
// When a pool's last user releases it, the streams still allocating to it
// stop, and the pool is handed back to the device cache, which gives back
// its free segments and drops the pool once nothing of it is in use
// (erase).
//
// Invariant: every stream's pool is retained (users > 0) and owned here.
//
// Thread-safety: none; the owning DeviceCache's lock guards it.
#pragma once

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "memory/block_pool.h"

namespace accel::memory::detail {

class PrivatePools {
 public:
  PrivatePools() = default;
  PrivatePools(const PrivatePools&) = delete;
  PrivatePools& operator=(const PrivatePools&) = delete;

  // Counts a user of `id`, creating the pool on its first. Throws
  // std::bad_alloc.
  void retain(MempoolId id);
  // Counts a user of `id` less. Returns the pool when that was its last user
  // (no stream allocates to it any more; the caller gives back its memory,
  // then erases it), else null. Throws InvalidArgument naming `device` when
  // the pool has no users.
  [[nodiscard]] PrivatePool* release(MempoolId id, DeviceIndex device);
  // From now on `stream` allocates to `id`, which must be retained (else
  // InvalidArgument naming `device`). Returns true when the stream did not
  // allocate to a pool before (the device's fast paths must then stop
  // serving it); false when it only changed pools.
  [[nodiscard]] bool beginAllocating(MempoolId id, StreamId stream, DeviceIndex device);
  // `stream` no longer allocates to `id` (nothing happens if it did not).
  void endAllocating(MempoolId id, StreamId stream) noexcept;
  // Forgets a pool (after release returned it and its memory is gone).
  void erase(const PrivatePool* pool) noexcept;

  // The pool `stream` allocates to, or null (the device's default pools):
  // asked on every allocation that misses the caches, so inline.
  [[nodiscard]] PrivatePool* allocatingTo(StreamId stream) const noexcept {
    for (const auto& [allocating, pool] : allocating_) {
      if (allocating == stream) return pool;
    }
    return nullptr;
  }
  // Some stream allocates to a pool.
  [[nodiscard]] bool anyAllocating() const noexcept { return !allocating_.empty(); }
  // The pool of that id, or null when it does not exist.
  [[nodiscard]] const PrivatePool* find(MempoolId id) const noexcept;

 private:
  std::map<MempoolId, std::unique_ptr<PrivatePool>> pools_;
  // Short (one entry per capturing stream): a vector searched in order.
  std::vector<std::pair<StreamId, PrivatePool*>> allocating_;
};

}  // namespace accel::memory::detail

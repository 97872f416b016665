// RecordTable: the cuda backend's records of one kind (events, graphs) by the
// id the hooks hand out for them.
//
// Ids count up from 1 and are never reused, so a stale id finds nothing
// rather than another record. Records are plain values guarded by the
// table's one lock: `with` runs its function under it, which is what makes a
// graph's state changes (capture begin and end, instantiate, reset) atomic
// with respect to each other.
//
// Thread-safety: all members are thread-safe. A function given to `with` or
// `removeWith` must not call back into the same table.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "accel/adapter/failure.h"

namespace accel::cuda::detail {

template <typename Id, typename Record>
class RecordTable {
 public:
  // `kind` names a record in errors ("event", "graph"); a string literal.
  explicit RecordTable(const char* kind) noexcept : kind_(kind) {}

  // Stores `record` under a new id and returns the id. Throws std::bad_alloc.
  [[nodiscard]] Id add(Record record) {
    const Id id = next_.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(mutex_);
    records_.emplace(id, std::move(record));
    return id;
  }

  // Returns fn(record) for the record of `id`, with the table locked. Throws
  // InvalidArgument if `id` names no live record, and what fn throws.
  template <typename Fn>
  decltype(auto) with(Id id, Fn&& fn) {
    std::lock_guard lock(mutex_);
    return std::forward<Fn>(fn)(live(id));
  }

  // Runs fn(record) with the table locked, then removes the record; if fn
  // throws, the record stays. Throws like `with`.
  template <typename Fn>
  void removeWith(Id id, Fn&& fn) {
    std::lock_guard lock(mutex_);
    std::forward<Fn>(fn)(live(id));
    records_.erase(id);
  }

  // Removes the record of `id` and returns it; nothing if there is none.
  // Never throws.
  std::optional<Record> take(Id id) noexcept {
    std::lock_guard lock(mutex_);
    auto found = records_.find(id);
    if (found == records_.end()) return std::nullopt;
    std::optional<Record> record(std::move(found->second));
    records_.erase(found);
    return record;
  }

 private:
  // The record of `id`; the lock is held. Throws InvalidArgument.
  Record& live(Id id) {
    auto found = records_.find(id);
    ACCEL_ADAPTER_CHECK(found != records_.end(), adapter::InvalidArgument, kind_, " id ",
                        id, " is not a live ", kind_,
                        " of the cuda backend (never created, or destroyed)");
    return found->second;
  }

  const char* const kind_;
  std::atomic<Id> next_{1};
  std::mutex mutex_;
  std::unordered_map<Id, Record> records_;
};

}  // namespace accel::cuda::detail

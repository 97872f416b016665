// IdTable: the live objects of one kind (events, graphs) by the id the hooks
// hand out for them.
//
// Ids count up from 1 and are never reused, so a stale id finds nothing
// rather than another object. Objects are shared: a caller keeps the one it
// found alive while it works on it, even if another thread removes it from
// the table meanwhile (the object's own lock guards its state).
//
// Thread-safety: all members are thread-safe; find takes the lock shared.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <utility>

namespace accel::openreg::detail {

template <typename Id, typename Object>
class IdTable {
 public:
  // Stores the object `make(id)` returns under a new id and returns the id.
  // `make` runs without the lock; what it throws propagates and nothing is
  // stored. Throws std::bad_alloc.
  template <typename Make>
  [[nodiscard]] Id add(Make&& make) {
    const Id id = next_.fetch_add(1, std::memory_order_relaxed);
    std::shared_ptr<Object> object = std::forward<Make>(make)(id);
    std::unique_lock<std::shared_mutex> lock(mutex_);
    objects_.emplace(id, std::move(object));
    return id;
  }

  // The object stored under `id`; null if there is none (never issued, or
  // taken). Never throws.
  [[nodiscard]] std::shared_ptr<Object> find(Id id) const noexcept {
    std::shared_lock<std::shared_mutex> lock(mutex_);
    auto found = objects_.find(id);
    return found != objects_.end() ? found->second : nullptr;
  }

  // Removes the object stored under `id` and returns it (null if none), so
  // that the caller, not the table's lock holder, destroys it. Never throws.
  [[nodiscard]] std::shared_ptr<Object> take(Id id) noexcept {
    std::unique_lock<std::shared_mutex> lock(mutex_);
    auto found = objects_.find(id);
    if (found == objects_.end()) return nullptr;
    std::shared_ptr<Object> object = std::move(found->second);
    objects_.erase(found);
    return object;
  }

 private:
  std::atomic<Id> next_{1};
  mutable std::shared_mutex mutex_;
  std::unordered_map<Id, std::shared_ptr<Object>> objects_;
};

}  // namespace accel::openreg::detail

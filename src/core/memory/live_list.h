// Internal: LiveList<T>, the live objects of one kind that a core fork
// callback holds across fork() (device_fork.cpp: the device caches;
// pinned_fork.cpp: the pinned caches).
//
// An intrusive list, newest first, through each object's `live_prev_` and
// `live_next_` (T befriends LiveList<T>), under a mutex that lockAll takes
// before fork() and unlockAll releases after it, in parent and child. A list
// is a constinit global, constant-initialised and never destroyed, so a fork
// during static destruction finds it whole.
//
// Thread-safety: link and unlink take the list's mutex (an object links
// itself at the end of its construction and unlinks at the start of its
// destruction); lockAll and unlockAll are the fork callbacks' (the forking
// thread, around fork()). Nothing here throws or allocates.
#pragma once

#include <mutex>

namespace accel::memory::detail {

template <typename T>
class LiveList {
 public:
  constexpr LiveList() noexcept = default;
  LiveList(const LiveList&) = delete;
  LiveList& operator=(const LiveList&) = delete;

  void link(T* object) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    object->live_next_ = first_;
    if (first_ != nullptr) first_->live_prev_ = object;
    first_ = object;
  }

  void unlink(T* object) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    if (object->live_prev_ != nullptr) {
      object->live_prev_->live_next_ = object->live_next_;
    } else {
      first_ = object->live_next_;
    }
    if (object->live_next_ != nullptr)
      object->live_next_->live_prev_ = object->live_prev_;
    object->live_prev_ = object->live_next_ = nullptr;
  }

  // Takes the list's mutex (kept until unlockAll), then calls hold(object)
  // for every live object, newest first.
  template <typename Hold>
  void lockAll(Hold hold) noexcept {
    mutex_.lock();
    for (T* object = first_; object != nullptr; object = object->live_next_) hold(object);
  }

  // Calls release(object) for every live object, then releases the mutex.
  template <typename Release>
  void unlockAll(Release release) noexcept {
    for (T* object = first_; object != nullptr; object = object->live_next_)
      release(object);
    mutex_.unlock();
  }

 private:
  std::mutex mutex_;
  T* first_ = nullptr;
};

}  // namespace accel::memory::detail

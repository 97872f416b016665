// FakeSegmentSource: a SegmentSource for allocator tests. Addresses are
// invented (the allocator never touches the memory), capacity is enforced,
// every call is counted, and events complete only when the test says so.
//
// Thread-safety: all members are thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <vector>

#include "accel/memory/segment_source.h"

namespace accel::memory::testing {

class FakeSegmentSource : public SegmentSource {
 public:
  explicit FakeSegmentSource(std::size_t capacity, bool events = false,
                             std::size_t page_size = 0)
      : capacity_(capacity), events_(events), page_size_(page_size) {}

  void* allocateSegment(DeviceIndex, std::size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++allocations;
    if (bytes > capacity_ - used_) return nullptr;
    used_ += bytes;
    return take(bytes);
  }
  void freeSegment(DeviceIndex, void*, std::size_t bytes) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++frees;
    used_ -= bytes;
  }
  DeviceMemoryInfo memoryInfo(DeviceIndex) const noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    return {capacity_, capacity_ - used_};
  }

  std::size_t pageSize() const noexcept override { return page_size_; }
  void* reserveAddressRange(DeviceIndex, std::size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++reservations;
    return take(bytes);
  }
  void releaseAddressRange(DeviceIndex, void*, std::size_t) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++range_releases;
  }
  bool mapPages(DeviceIndex, void*, std::size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes > capacity_ - used_) return false;
    used_ += bytes;
    mapped_ += bytes;
    return true;
  }
  void unmapPages(DeviceIndex, void*, std::size_t bytes) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    used_ -= bytes;
    mapped_ -= bytes;
  }

  bool hasEvents() const noexcept override { return events_; }
  EventId recordEvent(Stream stream) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (event_records_left == 0) throw std::runtime_error("fake: event recording failed");
    if (event_records_left > 0) --event_records_left;
    const EventId id = ++next_event_;
    pending_.insert(id);
    recorded_on.push_back(stream.id);
    return id;
  }
  bool eventCompleted(EventId event) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    return auto_complete_ || pending_.count(event) == 0;
  }
  void streamWaitEvent(Stream stream, EventId event) override {
    std::lock_guard<std::mutex> lock(mutex_);
    waits.emplace_back(stream.id, event);
  }
  void releaseEvent(EventId event) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.erase(event);
    ++released_events;
  }
  void synchronizeEvent(EventId event) override {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.erase(event);
    ++synchronized_events;
  }

  // Completes every event recorded so far (the device caught up).
  void completeAll() {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.clear();
  }
  void setAutoComplete(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto_complete_ = on;
  }
  std::size_t used() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return used_;
  }
  std::size_t mapped() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return mapped_;
  }

  std::atomic<int> allocations{0};
  std::atomic<int> frees{0};
  std::atomic<int> reservations{0};
  std::atomic<int> range_releases{0};
  std::atomic<int> released_events{0};
  std::atomic<int> synchronized_events{0};
  int event_records_left = -1;        // >= 0: recordEvent throws once it reaches 0
  std::vector<StreamId> recorded_on;  // guarded by mutex_ in writes
  std::vector<std::pair<StreamId, EventId>> waits;  // (stream, event)

 private:
  void* take(std::size_t bytes) {
    // Spread segments apart so that no two are adjacent by accident.
    const std::uintptr_t at = next_address_;
    next_address_ += bytes + (std::uintptr_t{1} << 30);
    return reinterpret_cast<void*>(at);
  }

  mutable std::mutex mutex_;
  const std::size_t capacity_;
  const bool events_;
  const std::size_t page_size_;
  std::size_t used_ = 0;
  std::size_t mapped_ = 0;
  std::uintptr_t next_address_ = std::uintptr_t{1} << 40;
  EventId next_event_ = 0;
  std::set<EventId> pending_;
  bool auto_complete_ = false;
};

}  // namespace accel::memory::testing

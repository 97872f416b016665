// OutOfMemoryReport: what a device cache says when a request cannot be met —
// the facts its OutOfMemory observers get, and the message that tells the
// user what to change — and the raising of it: the sink (the allocator's
// observers) is told, then OutOfMemory is thrown.
//
// The facts are read from the device as it stands after every retry (its
// figures, its segments, the source's free memory, the cap); the message
// opens with the sentences PyTorch users and their log scrapers know ("...
// is out of memory. Tried to allocate 2.00 MiB") and ends with one
// suggestion, chosen so that it would change something: raise the memory
// fraction when the fraction refused the request, expandable segments or
// max_split_size when memory is reserved but too fragmented, else free
// tensors or use smaller batches.
//
// Thread-safety: a report is a value, made under the device's lock; raise
// is called with it released (observers may free memory on the device).
#pragma once

#include <cstdint>
#include <string>

#include "accel/memory/allocator_settings.h"
#include "accel/memory/segment_source.h"
#include "accel/memory_stats.h"
#include "memory/block_pool.h"
#include "memory/device_cache/reserve_cap.h"

namespace accel::memory::detail {

// Where a report goes before the OutOfMemory is thrown.
class OutOfMemorySink {
 public:
  // Tells the observers. Must not throw.
  virtual void notify(const OutOfMemoryEvent& event) const noexcept = 0;

 protected:
  ~OutOfMemorySink() = default;
};

// What a report reads of the device, under its lock.
struct OutOfMemoryScene {
  Device device;
  StreamId stream = kDefaultStreamId;
  std::size_t requested = 0;  // as rounded (as asked, when above kMaxRequest)
  SegmentSource::DeviceMemoryInfo memory{};  // the source's
  ReserveCap cap{};
  std::int64_t reserved_bytes = 0;
  std::int64_t allocated_bytes = 0;
  const SegmentMap* segments = nullptr;  // every segment of the device
  // The settings that a suggestion would change, and whether the source maps
  // pages (expandable segments are possible).
  bool expandable_segments = false;
  std::size_t max_split_size = 0;
  bool maps_pages = false;
};

class OutOfMemoryReport {
 public:
  // Throws std::bad_alloc (the message).
  explicit OutOfMemoryReport(const OutOfMemoryScene& scene);

  [[nodiscard]] const OutOfMemoryEvent& facts() const noexcept { return facts_; }
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

  // Tells `sink`, then throws OutOfMemory with the message.
  [[noreturn]] void raise(const OutOfMemorySink& sink) const;

 private:
  OutOfMemoryEvent facts_;
  std::string message_;
};

}  // namespace accel::memory::detail

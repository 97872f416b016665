// PinnedPages: openreg's "page-locked" host memory, the raw pages under the
// core's pinned cache (accel/memory/pinned_caching_allocator.h), which the
// core builds over them across the plugin boundary.
//
// Pinned memory is host memory the backend knows about: page-aligned mmap
// ranges, each recorded here so that a copy can tell pinned host memory
// (copied asynchronously) from pageable memory (the copy is waited for).
// The core's cache keeps freed blocks, still pinned, for reuse, and records
// openreg's events (StreamEvents below) on the streams of asynchronous
// copies, so a block freed while such a copy is queued is reused only after
// the copy ran. openreg does not mlock() the pages: a simulated device gains
// nothing from it, and containers allow only a little locked memory
// (RLIMIT_MEMLOCK); what frameworks need to test (which allocator memory
// came from, isPinnedPtr, reuse after the copy) behaves as on real devices.
//
// Given openreg's events (for the copies' streams), nothing else.
//
// Thread-safety: all members are thread-safe.
// Lifetime: a part of the backend, never destroyed once registered.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>

#include "accel/adapter/backend.h"
#include "types.h"

namespace accel::openreg::detail {

class Events;

class PinnedPages final : public adapter::Memory, public adapter::StreamEvents {
 public:
  // `events` must outlive this object (the backend owns both).
  explicit PinnedPages(Events& events) noexcept : events_(events) {}

  // Page-aligned host memory of at least `bytes`; nullptr when mmap fails
  // (the cache frees and retries).
  void* allocate(std::int8_t device, std::size_t bytes) override;
  void free(std::int8_t device, void* data, std::size_t bytes) noexcept override;
  [[nodiscard]] adapter::StreamEvents* streamEvents() noexcept override { return this; }

  // Whether ptr lies in pinned pages. Never throws.
  [[nodiscard]] bool isPinned(const void* ptr) const noexcept;

  // ---- openreg's events on the copies' streams ----
  [[nodiscard]] std::uint64_t record(Stream stream) override;
  [[nodiscard]] bool completed(std::uint64_t event) noexcept override;
  void wait(Stream stream, std::uint64_t event) override;
  void release(std::uint64_t event) noexcept override;
  void synchronize(std::uint64_t event) override;

 private:
  Events& events_;
  mutable std::shared_mutex mutex_;
  std::map<std::uintptr_t, std::size_t> ranges_;  // first byte -> length
};

}  // namespace accel::openreg::detail

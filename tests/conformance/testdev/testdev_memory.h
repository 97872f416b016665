// The testdev device's raw memory under the core's caches (device segments
// with a capacity, pinned host segments it can recognise) and the stream
// events the core's caching allocators record on its streams. Part of the
// testdev plugins (testdev_backend.h); C++17, nothing of libaccel.so.
//
// Thread-safety: every member is thread-safe (the core calls allocate and
// free under the device's allocator lock; the pinned lookups come from any
// thread).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>

#include "accel/plugin_adapter.h"
#include "stream_engine.h"

namespace testdev {

// Stream events as marks of the engine (StreamEvents of the adapter).
class EngineEvents final : public accel::adapter::StreamEvents {
 public:
  explicit EngineEvents(StreamEngine& engine) : engine_(engine) {}

  [[nodiscard]] std::uint64_t record(Stream stream) override;
  [[nodiscard]] bool completed(std::uint64_t event) noexcept override;
  void wait(Stream stream, std::uint64_t event) override;
  void release(std::uint64_t event) noexcept override;
  void synchronize(std::uint64_t event) override;

 private:
  // The mark of a live event; InvalidArgument for an unknown id.
  [[nodiscard]] std::shared_ptr<Mark> markOf(std::uint64_t event);

  StreamEngine& engine_;
  std::mutex mutex_;  // guards the two below
  std::map<std::uint64_t, std::shared_ptr<Mark>> marks_;
  std::uint64_t next_ = 1;
};

// Device memory: whole segments of aligned host memory, at most `capacity`
// bytes per device.
class DeviceMemory final : public accel::adapter::Memory {
 public:
  static constexpr std::size_t kAlignment = 512;

  DeviceMemory(std::uint64_t capacity, EngineEvents& events)
      : capacity_(capacity), events_(events) {}

  void* allocate(std::int8_t device, std::size_t bytes) override;
  void free(std::int8_t device, void* data, std::size_t bytes) noexcept override;
  [[nodiscard]] accel::adapter::MemoryInfo info(
      std::int8_t device) const noexcept override;
  [[nodiscard]] accel::adapter::StreamEvents* streamEvents() noexcept override {
    return &events_;
  }

 private:
  const std::uint64_t capacity_;
  EngineEvents& events_;
  std::array<std::atomic<std::uint64_t>, StreamEngine::kMaxDevices> used_{};
};

// Page-locked host memory, as the device's driver would hand it: the
// backend copies from and into it asynchronously, and from any other host
// memory (pageable) synchronously, so it must tell the two apart.
class PinnedMemory final : public accel::adapter::Memory {
 public:
  explicit PinnedMemory(EngineEvents& events) : events_(events) {}

  void* allocate(std::int8_t device, std::size_t bytes) override;
  void free(std::int8_t device, void* data, std::size_t bytes) noexcept override;
  [[nodiscard]] accel::adapter::StreamEvents* streamEvents() noexcept override {
    return &events_;
  }
  // Whether [ptr, ptr + bytes) lies in one live segment.
  [[nodiscard]] bool holds(const void* ptr, std::size_t bytes) const;

 private:
  EngineEvents& events_;
  mutable std::mutex mutex_;                        // guards segments_
  std::map<std::uintptr_t, std::size_t> segments_;  // start -> bytes
};

}  // namespace testdev

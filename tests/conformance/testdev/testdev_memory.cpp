#include "testdev_memory.h"

#include <cstdlib>
#include <utility>

namespace testdev {

using accel::adapter::InvalidArgument;

std::uint64_t EngineEvents::record(Stream stream) {
  std::shared_ptr<Mark> mark = engine_.mark(stream);
  std::lock_guard<std::mutex> lock(mutex_);
  const std::uint64_t id = next_++;
  marks_.emplace(id, std::move(mark));
  return id;
}

std::shared_ptr<Mark> EngineEvents::markOf(std::uint64_t event) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = marks_.find(event);
  ACCEL_ADAPTER_CHECK(it != marks_.end(), InvalidArgument, "testdev: stream event ",
                      event, " is not live (released, or never recorded)");
  return it->second;
}

bool EngineEvents::completed(std::uint64_t event) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = marks_.find(event);
  return it == marks_.end() || it->second->passed.load(std::memory_order_acquire);
}

void EngineEvents::wait(Stream stream, std::uint64_t event) {
  engine_.waitOn(stream, markOf(event));
}

void EngineEvents::release(std::uint64_t event) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  marks_.erase(event);
}

void EngineEvents::synchronize(std::uint64_t event) {
  const std::shared_ptr<Mark> mark = markOf(event);
  engine_.waitFor(*mark);
}

void* DeviceMemory::allocate(std::int8_t device, std::size_t bytes) {
  std::atomic<std::uint64_t>& used = used_[static_cast<std::size_t>(device)];
  // nullptr: the device is full (the core frees its cache and retries). The
  // core holds the device's lock here, so check and add do not race.
  if (bytes > capacity_ || used.load() > capacity_ - bytes) return nullptr;
  const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* data = std::aligned_alloc(kAlignment, rounded);
  if (data != nullptr) used += bytes;
  return data;
}

void DeviceMemory::free(std::int8_t device, void* data, std::size_t bytes) noexcept {
  std::free(data);
  used_[static_cast<std::size_t>(device)] -= bytes;
}

accel::adapter::MemoryInfo DeviceMemory::info(std::int8_t device) const noexcept {
  const std::uint64_t used = used_[static_cast<std::size_t>(device)].load();
  return {capacity_, capacity_ > used ? capacity_ - used : 0};
}

void* PinnedMemory::allocate(std::int8_t /*device*/, std::size_t bytes) {
  const std::size_t rounded = (bytes + DeviceMemory::kAlignment - 1) /
                              DeviceMemory::kAlignment * DeviceMemory::kAlignment;
  void* data = std::aligned_alloc(DeviceMemory::kAlignment, rounded);
  if (data == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  segments_.emplace(reinterpret_cast<std::uintptr_t>(data), bytes);
  return data;
}

void PinnedMemory::free(std::int8_t /*device*/, void* data,
                        std::size_t /*bytes*/) noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    segments_.erase(reinterpret_cast<std::uintptr_t>(data));
  }
  std::free(data);
}

bool PinnedMemory::holds(const void* ptr, std::size_t bytes) const {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = segments_.upper_bound(address);
  if (it == segments_.begin()) return false;
  --it;
  const std::uintptr_t offset = address - it->first;
  return offset < it->second && bytes <= it->second - offset;
}

}  // namespace testdev

#include "accel/memory/caching_allocator.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <utility>

#include "accel/error.h"
#include "accel/hook_catalogue.h"
#include "accel/memory/device_cache_handle.h"
#include "layers/layered_allocator.h"
#include "memory/device_cache/device_cache.h"

namespace accel::memory {

using detail::Block;
using detail::DeviceCache;

// The OutOfMemory observers are the sink of every device's reports.
struct CachingAllocator::Shared final : detail::OutOfMemorySink {
  void notify(const OutOfMemoryEvent& event) const noexcept override;

  mutable std::mutex observers_mutex;
  std::vector<OutOfMemoryObserver> observers;
  std::atomic<std::uint64_t> next_pool{1};
  std::atomic<bool> said_expandable_ignored{false};
};

namespace {

// The settings a source can apply. Expandable segments need page mapping;
// where the source has none they are ignored, as docs/memory.md promises
// ("growable segments where the backend maps pages"): ACCEL_ALLOC_CONF is
// read by every backend of the process, and a setting meant for one that maps
// pages must not make every allocation of another fail. Said once per
// allocator, on stderr, so that the user knows the setting has no effect.
AllocatorSettings applicableSettings(AllocatorSettings settings,
                                     const SegmentSource& source, DeviceType type,
                                     std::atomic<bool>& said) {
  if (!settings.expandable_segments || source.pageSize() > 0) return settings;
  settings.expandable_segments = false;
  if (!said.exchange(true, std::memory_order_relaxed)) {
    std::fprintf(stderr,
                 "accelhooks: allocator setting 'expandable_segments:true' is ignored "
                 "for '%s': its memory cannot map pages, so its segments do not grow\n",
                 std::string(deviceTypeName(type)).c_str());
  }
  return settings;
}

}  // namespace

CachingAllocator::CachingAllocator(DeviceType type, int device_count,
                                   SegmentSource& source, AllocatorSettings settings)
    : type_(type), source_(source), shared_(std::make_unique<Shared>()) {
  ACCEL_CHECK(device_count >= 1 && device_count <= kMaxDevicesPerType, InvalidArgument,
              "CachingAllocator: device count ", device_count, " is outside [1, ",
              kMaxDevicesPerType, "]");
  const AllocatorSettings applicable =
      applicableSettings(settings, source, type, shared_->said_expandable_ignored);
  devices_.reserve(static_cast<std::size_t>(device_count));
  for (int i = 0; i < device_count; ++i) {
    devices_.push_back(std::make_unique<DeviceCache>(*this, static_cast<DeviceIndex>(i),
                                                     applicable, *shared_));
  }
}

CachingAllocator::~CachingAllocator() = default;

DeviceCache& CachingAllocator::device(DeviceIndex index) const {
  if (index >= 0 && index < static_cast<int>(devices_.size())) [[likely]]
    return *devices_[static_cast<std::size_t>(index)];
  throwBadDevice(index);
}

void CachingAllocator::throwBadDevice(DeviceIndex index) const {
  throw InvalidArgument(accel::detail::concat(
      "caching allocator: device index ", static_cast<int>(index), " out of range [0, ",
      devices_.size(), ") for '", type_, "'"));
}

// CachingAllocator::allocate is defined in device_cache.cpp, next to the
// path it leads to, so that the two compile as one function.

void CachingAllocator::throwForeignStream(Stream stream, Device where) {
  throw InvalidArgument(accel::detail::concat("caching allocator: stream ", stream,
                                              " is not a stream of ", where));
}

void CachingAllocator::failAsOutOfMemory(DeviceIndex index, std::size_t bytes,
                                         Stream stream) {
  DeviceCache& cache = device(index);
  ACCEL_CHECK(stream.device == Device::unchecked(type_, index), InvalidArgument,
              "caching allocator: stream ", stream, " is not a stream of ",
              Device::unchecked(type_, index));
  cache.failAsOutOfMemory(bytes, stream.id);
}

bool CachingAllocator::owns(const DataPtr& data) const noexcept {
  // Behind a hook layer's DataPtr (layers/layered_allocator.h) may be ours.
  const accel::detail::DataPtrView view = accel::detail::innerView(data);
  if (view.deleter != &detail::freeCachedBlock || view.context == nullptr) return false;
  return &static_cast<Block*>(view.context)->owner->allocator() == this;
}

DeleterFn CachingAllocator::blockDeleter() noexcept { return &detail::freeCachedBlock; }

std::optional<DeviceIndex> CachingAllocator::deviceOf(const void* ptr) const noexcept {
  for (const auto& cache : devices_) {
    if (cache->holds(ptr)) return cache->index();
  }
  return std::nullopt;
}

std::optional<BlockInfo> CachingAllocator::findBlock(DeviceIndex index,
                                                     const void* ptr) const {
  return device(index).findBlock(ptr);
}

BlockUse CachingAllocator::useBlock(DeviceIndex index, const void* ptr) {
  BlockUse use;
  use.block_ = device(index).useBlock(ptr, use.info_);
  return use;
}

BlockUse::BlockUse(const BlockUse& other) noexcept
    : block_(other.block_), info_(other.info_) {
  if (block_ != nullptr) {
    auto* block = static_cast<Block*>(block_);
    block->owner->retainUse(block);
  }
}

BlockUse::BlockUse(BlockUse&& other) noexcept
    : block_(std::exchange(other.block_, nullptr)), info_(other.info_) {}

BlockUse& BlockUse::operator=(BlockUse other) noexcept {
  std::swap(block_, other.block_);
  std::swap(info_, other.info_);
  return *this;
}

BlockUse::~BlockUse() {
  if (block_ != nullptr) {
    auto* block = static_cast<Block*>(block_);
    block->owner->releaseUse(block);
  }
}

void CachingAllocator::recordStream(const DataPtr& data, Stream stream) {
  ACCEL_CHECK(owns(data), InvalidArgument,
              "recordStream(): the DataPtr was not allocated by this caching allocator");
  auto* block = static_cast<Block*>(accel::detail::innerView(data).context);
  ACCEL_CHECK(stream.device == data.device(), InvalidArgument, "recordStream(): stream ",
              stream, " is not a stream of ", data.device(), " where the block lives");
  block->owner->recordStream(block, stream.id);
}

void CachingAllocator::setSettings(const AllocatorSettings& settings) {
  const AllocatorSettings applicable =
      applicableSettings(settings, source_, type_, shared_->said_expandable_ignored);
  for (auto& cache : devices_) cache->setSettings(applicable);
}

AllocatorSettings CachingAllocator::settings() const { return devices_[0]->settings(); }

void CachingAllocator::setMemoryLimit(DeviceIndex index, std::size_t bytes) {
  device(index).setCap(detail::ReserveCap{bytes != 0, bytes, std::nullopt, 0});
}

void CachingAllocator::setMemoryFraction(DeviceIndex index, double fraction) {
  DeviceCache& cache = device(index);
  ACCEL_CHECK(fraction >= 0.0 && fraction <= 1.0, InvalidArgument,
              hookInfo(HookId::setMemoryFraction).name, "(): fraction ", fraction,
              " is outside [0, 1] (the share of the device's total memory)");
  const std::size_t total = source_.memoryInfo(index).total_bytes;
  ACCEL_CHECK(total > 0, InvalidArgument, hookInfo(HookId::setMemoryFraction).name,
              "(): '", type_,
              "' does not report its capacity; use setMemoryLimit with a byte count");
  // A fraction that leaves no byte (0 included) allows no allocation, as in
  // torch; the cap keeps the fraction to name it when an allocation fails.
  const auto bytes = static_cast<std::size_t>(static_cast<double>(total) * fraction);
  cache.setCap(detail::ReserveCap{true, bytes, fraction, total});
}

DeviceMemoryInfo CachingAllocator::memoryInfo(DeviceIndex index) const {
  (void)device(index);  // the index check
  return source_.memoryInfo(index);
}

MempoolId CachingAllocator::createPool() {
  return MempoolId{shared_->next_pool.fetch_add(1, std::memory_order_relaxed), 0};
}

void CachingAllocator::retainPool(DeviceIndex index, MempoolId pool) {
  ACCEL_CHECK(!pool.isDefault(), InvalidArgument,
              "retainPool(): {0, 0} is the default pool, not a private one");
  device(index).retainPool(pool);
}

void CachingAllocator::releasePool(DeviceIndex index, MempoolId pool) {
  device(index).releasePool(pool);
}

void CachingAllocator::beginAllocateToPool(DeviceIndex index, MempoolId pool,
                                           Stream stream) {
  DeviceCache& cache = device(index);
  ACCEL_CHECK(stream.device == Device::unchecked(type_, index), InvalidArgument,
              "beginAllocateToPool(): stream ", stream, " is not on device ",
              static_cast<int>(index));
  cache.beginAllocateToPool(pool, stream.id);
}

void CachingAllocator::endAllocateToPool(DeviceIndex index, MempoolId pool,
                                         Stream stream) {
  device(index).endAllocateToPool(pool, stream.id);
}

MemoryStats CachingAllocator::stats(DeviceIndex index) const {
  return device(index).stats();
}

void CachingAllocator::resetPeakStats(DeviceIndex index) {
  device(index).resetPeakStats();
}

void CachingAllocator::resetAccumulatedStats(DeviceIndex index) {
  device(index).resetAccumulatedStats();
}

void CachingAllocator::emptyCache() {
  for (auto& cache : devices_) cache->emptyCache();
}

void CachingAllocator::recordHistory(const MemoryHistoryOptions& options) {
  ACCEL_CHECK(options.enabled == HistoryRecording::Off || options.max_entries > 0,
              InvalidArgument, hookInfo(HookId::recordMemoryHistory).name,
              "(): max_entries must be positive while recording");
  for (auto& cache : devices_) cache->recordHistory(options);
}

MemorySnapshot CachingAllocator::snapshot(const MemorySnapshotOptions& options) const {
  MemorySnapshot out;
  if (options.all_devices) {
    for (const auto& cache : devices_) {
      if (options.include_trace) cache->noteSnapshot();
      cache->snapshotInto(out, options.include_trace);
    }
  } else {
    DeviceCache& cache = device(options.device);
    if (options.include_trace) cache.noteSnapshot();
    cache.snapshotInto(out, options.include_trace);
  }
  detail::resolveHostStacks(out);  // no device lock held: it may take the host's
  return out;
}

void CachingAllocator::attachOutOfMemoryObserver(OutOfMemoryObserver observer) {
  ACCEL_CHECK(static_cast<bool>(observer), InvalidArgument,
              hookInfo(HookId::attachOutOfMemoryObserver).name,
              "(): the observer is empty; pass a callable");
  std::lock_guard<std::mutex> lock(shared_->observers_mutex);
  shared_->observers.push_back(std::move(observer));
}

void CachingAllocator::Shared::notify(const OutOfMemoryEvent& event) const noexcept {
  std::vector<OutOfMemoryObserver> copied;
  try {
    std::lock_guard<std::mutex> lock(observers_mutex);
    copied = observers;
  } catch (...) {
    return;
  }
  for (const OutOfMemoryObserver& observer : copied) {
    try {
      observer(event);
    } catch (...) {
      // An observer must not turn an OutOfMemory into another error.
    }
  }
}

}  // namespace accel::memory

namespace accel::memory::detail {

DeviceCacheHandle::DeviceCacheHandle(CachingAllocator& allocator, DeviceIndex index)
    : cache_(&allocator.device(index)) {}

}  // namespace accel::memory::detail

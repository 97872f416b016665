#include "accel/memory/pinned_caching_allocator.h"

#include "layers/layered_allocator.h"

#include <bit>
#include <vector>

#include "accel/error.h"
#include "accel/memory/size_rules.h"
#include "hooks/fork_handlers.h"

namespace accel::memory {

struct PinnedCachingAllocator::Block {
  PinnedCachingAllocator* owner = nullptr;
  std::byte* ptr = nullptr;
  std::size_t size = 0;
  std::size_t requested = 0;
  bool allocated = false;  // its DataPtr lives (false once freed, events pending or not)
  int event_count = 0;
  std::uint32_t fork_generation = 0;  // the cache's at creation (pinned_fork.cpp)
  std::vector<Stream> streams;        // recordStream
};

namespace {

constexpr std::int64_t sized(std::size_t bytes) noexcept {
  return static_cast<std::int64_t>(bytes);
}

}  // namespace

PinnedCachingAllocator::PinnedCachingAllocator(SegmentSource& source) : source_(source) {
  linkLive();
}

PinnedCachingAllocator::~PinnedCachingAllocator() {
  unlinkLive();
  // In a fork child the parent's blocks and events are not this process's to
  // give back (pinned_fork.cpp).
  for (auto& [address, block] : blocks_) {
    if (!inherited(block.get())) source_.freeSegment(0, block->ptr, block->size);
  }
  for (auto& [event, block] : pending_) {
    if (!inherited(block)) source_.releaseEvent(event);
  }
}

bool PinnedCachingAllocator::inherited(const Block* block) const noexcept {
  return block->fork_generation != fork_generation_;
}

void PinnedCachingAllocator::setAsideInherited() noexcept {
  set_aside_pending_ = false;
  // Cached blocks of the parent's memory are never handed out again nor
  // unpinned: they stay reserved, out of the size index.
  std::erase_if(available_,
                [this](const auto& entry) { return inherited(entry.second); });
  // Events recorded in the parent must not be queried or released here; their
  // blocks stay active for good.
  std::erase_if(pending_, [this](const std::pair<EventId, Block*>& entry) {
    return inherited(entry.second);
  });
}

Device PinnedCachingAllocator::device() const noexcept {
  return Device(DeviceType::CPU, 0);
}

DataPtr PinnedCachingAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, device());
  ACCEL_CHECK(bytes <= kMaxRequest, OutOfMemory, "pinned host memory: ", bytes,
              " bytes cannot be allocated");
  const std::size_t size = std::bit_ceil(std::max(bytes, kMinBlockSize));
  std::lock_guard<std::mutex> lock(mutex_);
  // In a fork child, the cache of a backend the child cannot use refuses
  // (its source is the driver's host allocation, whose threads are gone).
  if (fork_generation_ != 0) [[unlikely]] {
    if (std::optional<DeviceType> owner = accel::detail::poisonedOwnerOf(*this))
      accel::detail::throwForkRefusal("pinned allocate()", deviceTypeName(*owner));
  }
  if (set_aside_pending_) [[unlikely]]
    setAsideInherited();
  if (!pending_.empty()) processEvents();
  Block* block = nullptr;
  auto found = available_.find(size);
  if (found != available_.end()) {
    block = found->second;
    available_.erase(found);
  } else {
    void* memory = source_.allocateSegment(0, size);
    if (memory == nullptr) {
      ++stats_.num_alloc_retries;
      releaseCached();
      memory = source_.allocateSegment(0, size);
    }
    if (memory == nullptr) {
      ++stats_.num_ooms;
      throw OutOfMemory(accel::detail::concat(
          "pinned host memory: cannot pin ", size, " bytes (", bytes, " requested); ",
          stats_.reserved_bytes.current,
          " bytes are pinned by this cache. Free pinned buffers you no longer need"));
    }
    auto owned = std::make_unique<Block>();
    owned->owner = this;
    owned->ptr = static_cast<std::byte*>(memory);
    owned->size = size;
    owned->fork_generation = fork_generation_;
    block = owned.get();
    blocks_.emplace(reinterpret_cast<std::uintptr_t>(memory), std::move(owned));
    stats_.reserved_bytes.add(false, sized(size));
    stats_.segments.add(false, 1);
    ++stats_.num_device_alloc;
  }
  block->allocated = true;
  block->requested = bytes;
  stats_.allocated_bytes.add(false, sized(size));
  stats_.allocations.add(false, 1);
  stats_.active_bytes.add(false, sized(size));
  stats_.active.add(false, 1);
  stats_.requested_bytes.add(false, sized(bytes));
  return DataPtr(block->ptr, block, &freeFromDataPtr, device());
}

void PinnedCachingAllocator::freeFromDataPtr(void* context) noexcept {
  auto* block = static_cast<Block*>(context);
  block->owner->free(block);
}

void PinnedCachingAllocator::recordStream(const DataPtr& data, Stream stream) {
  // Behind a hook layer's DataPtr (layers/layered_allocator.h) is ours.
  const accel::detail::DataPtrView view = accel::detail::innerView(data);
  ACCEL_CHECK(view.deleter == &freeFromDataPtr && view.context != nullptr &&
                  static_cast<Block*>(view.context)->owner == this,
              InvalidArgument,
              "recordStream(): the DataPtr is not pinned memory of this cache");
  std::lock_guard<std::mutex> lock(mutex_);
  auto* block = static_cast<Block*>(view.context);
  for (const Stream& used : block->streams) {
    if (used == stream) return;
  }
  block->streams.push_back(stream);
}

bool PinnedCachingAllocator::recordStreamAt(const void* ptr, Stream stream) {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto after = blocks_.upper_bound(address);
  if (after == blocks_.begin()) return false;
  Block* block = std::prev(after)->second.get();
  if (address >= reinterpret_cast<std::uintptr_t>(block->ptr) + block->size ||
      !block->allocated) {
    return false;
  }
  for (const Stream& used : block->streams) {
    if (used == stream) return true;
  }
  block->streams.push_back(stream);
  return true;
}

void PinnedCachingAllocator::free(Block* block) noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  // Freed from now on, even while events hold it back: no copy may name it.
  block->allocated = false;
  stats_.allocated_bytes.add(false, -sized(block->size));
  stats_.allocations.add(false, -1);
  stats_.requested_bytes.add(false, -sized(block->requested));
  if (inherited(block)) [[unlikely]] {
    // A fork child's free of its parent's memory leaks: freed by its user,
    // active for good; never cached, never given to the source.
    block->streams.clear();
    return;
  }
  if (!block->streams.empty() && source_.hasEvents()) {
    try {
      for (const Stream& stream : block->streams) {
        pending_.emplace_back(source_.recordEvent(stream), block);
        ++block->event_count;
      }
    } catch (...) {
      return;  // cannot prove the copies finished: keep the block out of use
    }
    block->streams.clear();
    return;
  }
  block->streams.clear();
  makeAvailable(block);
}

void PinnedCachingAllocator::makeAvailable(Block* block) noexcept {
  block->allocated = false;
  stats_.active_bytes.add(false, -sized(block->size));
  stats_.active.add(false, -1);
  try {
    available_.emplace(block->size, block);
  } catch (...) {
    // Could not cache it: the block stays pinned and unused (counted).
  }
}

void PinnedCachingAllocator::processEvents() noexcept {
  std::erase_if(pending_, [this](const std::pair<EventId, Block*>& entry) {
    if (!source_.eventCompleted(entry.first)) return false;
    source_.releaseEvent(entry.first);
    if (--entry.second->event_count == 0) makeAvailable(entry.second);
    return true;
  });
}

void PinnedCachingAllocator::releaseCached() noexcept {
  for (auto& [size, block] : available_) {
    source_.freeSegment(0, block->ptr, block->size);
    stats_.reserved_bytes.add(false, -sized(block->size));
    stats_.segments.add(false, -1);
    ++stats_.num_device_free;
    blocks_.erase(reinterpret_cast<std::uintptr_t>(block->ptr));
  }
  available_.clear();
}

bool PinnedCachingAllocator::isPinnedPtr(const void* ptr) const noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto after = blocks_.upper_bound(address);
  if (after == blocks_.begin()) return false;
  const Block& block = *std::prev(after)->second;
  return address < reinterpret_cast<std::uintptr_t>(block.ptr) + block.size;
}

std::optional<PinnedCachingAllocator::BlockInfo> PinnedCachingAllocator::findBlock(
    const void* ptr) const noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(mutex_);
  auto after = blocks_.upper_bound(address);
  if (after == blocks_.begin()) return std::nullopt;
  const Block& block = *std::prev(after)->second;
  if (address >= reinterpret_cast<std::uintptr_t>(block.ptr) + block.size)
    return std::nullopt;
  return BlockInfo{block.ptr, block.size, block.requested, block.allocated};
}

void PinnedCachingAllocator::emptyCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (set_aside_pending_) [[unlikely]]
    setAsideInherited();
  processEvents();
  releaseCached();
}

MemoryStats PinnedCachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void PinnedCachingAllocator::resetPeakStats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.resetPeaks();
}

}  // namespace accel::memory

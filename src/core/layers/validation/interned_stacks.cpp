#include "layers/validation/interned_stacks.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "memory/frame_walk.h"

namespace accel::detail {

namespace {

using memory::detail::CapturedStack;
using memory::detail::StackRecord;

std::uint64_t hashOf(void* const* frames, int count) noexcept {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (int i = 0; i < count; ++i) {
    h ^= reinterpret_cast<std::uintptr_t>(frames[i]);
    h *= 0x100000001B3ull;
    h ^= h >> 29;
  }
  return h;
}

constexpr std::size_t kShards = 16;

struct Shard {
  std::mutex mutex;
  // By hash; a different stack of the same hash is not interned.
  std::unordered_map<std::uint64_t, CapturedStack> stacks;
};

struct Table {
  std::array<Shard, kShards> shards;
  std::atomic<std::size_t> size{0};
};

Table& table() {
  static Table* stacks = new Table();  // used during exit, never destroyed
  return *stacks;
}

CapturedStack recordOf(void* const* frames, int count,
                       std::shared_ptr<const HostStack> host) {
  auto record = std::make_shared<StackRecord>();
  record->host = std::move(host);
  record->addresses.assign(frames, frames + count);
  return record;
}

}  // namespace

void lockInternedStacksForFork() noexcept {
  for (Shard& shard : table().shards) shard.mutex.lock();
}

void unlockInternedStacksAfterFork() noexcept {
  for (Shard& shard : table().shards) shard.mutex.unlock();
}

CapturedStack internedStack(std::shared_ptr<const HostStack> host) {
  std::array<void*, kRecordedFrames> frames;
  const int count = memory::detail::walkFrames(frames.data(), kRecordedFrames);
  void* const* first = frames.data();
  if (host) return recordOf(first, count, std::move(host));

  Table& interned = table();
  const std::uint64_t hash = hashOf(first, count);
  Shard& shard = interned.shards[hash % kShards];
  {
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto found = shard.stacks.find(hash);
    if (found != shard.stacks.end()) {
      const std::vector<void*>& known = found->second->addresses;
      if (std::equal(known.begin(), known.end(), first, first + count))
        return found->second;
      return recordOf(first, count, nullptr);  // another stack of the same hash
    }
  }
  CapturedStack record = recordOf(first, count, nullptr);
  if (interned.size.load(std::memory_order_relaxed) < kInternedStacks) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    if (shard.stacks.emplace(hash, record).second)
      interned.size.fetch_add(1, std::memory_order_relaxed);
  }
  return record;
}

}  // namespace accel::detail

// Block and Segment: the caching allocator's record of device memory.
//
// A segment is one piece of memory the device lent (or, when expandable, an
// address range the cache maps pages into); its blocks cut it into
// contiguous pieces, linked in address order so that freeing merges with free
// neighbours in O(1). Free blocks sit in their pool (block_pool.h): a small
// pool's in one list per size, a large pool's in a set ordered by (stream,
// size, address), so best fit for a stream is a bitmap search or one
// lower_bound.
//
// Thread-safety: plain data; the owning DeviceCache's lock guards it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "accel/memory/caching_allocator.h"
#include "memory/stack_capture.h"

namespace accel::memory::detail {

struct Segment;
struct BlockPool;
class DeviceCache;
struct Block;

// Where a request for `size` bytes on `stream` would rank among free blocks
// (before every block of that size).
struct FreeKey {
  StreamId stream;
  std::size_t size;
};

// Free blocks ordered by (stream, size, address); a FreeKey looks one up
// without building a Block.
struct BlockOrder {
  using is_transparent = void;
  bool operator()(const Block* a, const Block* b) const noexcept;
  bool operator()(const Block* a, const FreeKey& b) const noexcept;
  bool operator()(const FreeKey& a, const Block* b) const noexcept;
};
using FreeSet = std::set<Block*, BlockOrder>;

// What a thread cache's hit reads and writes (owner, ptr, size, requested,
// stream, pool, the flags, uses, reuse_next) is in the first 96 bytes; the
// rare stream uses and stack are tested through their flags, so the hit
// never reads the last two lines.
struct Block {
  DeviceCache* owner = nullptr;
  std::byte* ptr = nullptr;
  std::size_t size = 0;
  std::size_t requested = 0;
  StreamId stream = kDefaultStreamId;
  BlockPool* pool = nullptr;
  Segment* segment = nullptr;
  Block* prev = nullptr;  // neighbours in the segment, in address order
  Block* next = nullptr;
  bool allocated = false;     // handed out, freed with work still pending, or held
  bool pending_free = false;  // freed by the user, waiting for events
  // !stream_uses.empty() and stack != nullptr, kept beside them (setStack,
  // addStreamUse, clearStreamUses) so that the hot paths test this line only.
  bool has_stream_uses = false;
  bool has_stack = false;
  // A backend's BlockUses of it; a free while there are any only sets
  // freed_while_used, and the last use's end does the free. Counted under
  // the device's lock; atomic because a free into a thread cache reads it
  // without (acquire: the last use's work happened before the block is
  // reused).
  std::atomic<int> uses{0};
  bool freed_while_used = false;
  int event_count = 0;
  Block* reuse_next = nullptr;  // next block of its reuse list
  Block* free_prev = nullptr;   // neighbours in a small pool's size list
  Block* free_next = nullptr;
  FreeSet::iterator in_free_set{};    // where it is while in a large pool's free set
  std::vector<StreamId> stream_uses;  // recordStream, other than `stream`
  CapturedStack stack;                // allocation stack when recorded

  void setStack(CapturedStack captured) noexcept {
    stack = std::move(captured);
    has_stack = stack != nullptr;
  }
  void resetStack() noexcept {
    if (has_stack) [[unlikely]]
      dropStack();
  }
  // Out of line: the hot paths that may reset a stack keep no frame for it.
  [[gnu::noinline]] void dropStack() noexcept {
    stack.reset();
    has_stack = false;
  }
  void addStreamUse(StreamId use) {
    stream_uses.push_back(use);
    has_stream_uses = true;
  }
  void clearStreamUses() noexcept {
    stream_uses.clear();
    has_stream_uses = false;
  }
};

inline bool BlockOrder::operator()(const Block* a, const Block* b) const noexcept {
  if (a->stream != b->stream) return a->stream < b->stream;
  if (a->size != b->size) return a->size < b->size;
  return a->ptr < b->ptr;
}

inline bool BlockOrder::operator()(const Block* a, const FreeKey& b) const noexcept {
  if (a->stream != b.stream) return a->stream < b.stream;
  return a->size < b.size;
}

inline bool BlockOrder::operator()(const FreeKey& a, const Block* b) const noexcept {
  if (a.stream != b->stream) return a.stream < b->stream;
  return a.size <= b->size;
}

struct Segment {
  std::byte* base = nullptr;
  std::size_t size = 0;      // bytes backed by memory (mapped, for expandable)
  std::size_t reserved = 0;  // address range of an expandable segment
  StreamId stream = kDefaultStreamId;
  BlockPool* pool = nullptr;
  bool expandable = false;
  std::uint32_t fork_generation = 0;  // its device's at creation (device_fork.cpp)
  Block* head = nullptr;
};

// A device's segments by base address.
using SegmentMap = std::map<std::byte*, std::unique_ptr<Segment>>;

// The figures are signed (a decrease is a negative change).
constexpr std::int64_t sized(std::size_t bytes) noexcept {
  return static_cast<std::int64_t>(bytes);
}

// A free block that is its whole (non-expandable) segment: the segment can be
// given back to the device.
inline bool isFreeWholeSegment(const Block* block) noexcept {
  return !block->allocated && block->prev == nullptr && block->next == nullptr &&
         !block->segment->expandable;
}

// A block its user holds (a DataPtr, or BlockUses after the DataPtr went):
// not free, not waiting for events, not held in a reuse list (a held block
// keeps `allocated` but has no request).
inline bool isHandedOut(const Block* block) noexcept {
  return block->allocated && !block->pending_free && block->requested != 0;
}

}  // namespace accel::memory::detail

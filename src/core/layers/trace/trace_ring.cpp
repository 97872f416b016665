#include "layers/trace/trace_ring.h"

#include <bit>
#include <cstring>

namespace accel::trace::detail {
namespace {

// An event as the ring's words: the small fields packed into the first.
void pack(const TraceEvent& e, std::uint64_t (&w)[9]) noexcept {
  w[0] = static_cast<std::uint64_t>(e.kind) | static_cast<std::uint64_t>(e.hook) << 8 |
         static_cast<std::uint64_t>(e.failed) << 16 |
         static_cast<std::uint64_t>(e.timing) << 24 |
         static_cast<std::uint64_t>(e.type) << 32 |
         static_cast<std::uint64_t>(static_cast<std::uint8_t>(e.device)) << 40;
  w[1] = e.thread;
  w[2] = static_cast<std::uint64_t>(e.stream);
  w[3] = e.object;
  w[4] = e.bytes;
  w[5] = e.ptr;
  w[6] = e.ptr2;
  w[7] = static_cast<std::uint64_t>(e.begin);
  w[8] = static_cast<std::uint64_t>(e.end);
}

TraceEvent unpack(const std::uint64_t (&w)[9]) noexcept {
  TraceEvent e;
  e.kind = static_cast<TraceEventKind>(w[0] & 0xff);
  e.hook = static_cast<HookId>((w[0] >> 8) & 0xff);
  e.failed = ((w[0] >> 16) & 0xff) != 0;
  e.timing = static_cast<WorkTiming>((w[0] >> 24) & 0xff);
  e.type = static_cast<DeviceType>((w[0] >> 32) & 0xff);
  e.device = static_cast<std::int8_t>(static_cast<std::uint8_t>((w[0] >> 40) & 0xff));
  e.thread = static_cast<std::uint32_t>(w[1]);
  e.stream = static_cast<StreamId>(w[2]);
  e.object = w[3];
  e.bytes = w[4];
  e.ptr = w[5];
  e.ptr2 = w[6];
  e.begin = static_cast<std::int64_t>(w[7]);
  e.end = static_cast<std::int64_t>(w[8]);
  return e;
}

}  // namespace

std::size_t TraceRing::roundedCapacity(std::size_t capacity) noexcept {
  return std::bit_ceil(capacity < 1024 ? std::size_t{1024} : capacity);
}

TraceRing::TraceRing(std::size_t capacity)
    : mask_(roundedCapacity(capacity) - 1), slots_(std::make_unique<Slot[]>(mask_ + 1)) {}

void TraceRing::push(const TraceEvent& event) noexcept {
  std::uint64_t words[kWords];
  pack(event, words);
  const std::uint64_t sequence = next_.fetch_add(1, std::memory_order_relaxed);
  Slot& slot = slots_[sequence & mask_];
  // Take the slot: only from a whole, older event. Another writer still in
  // it (a writer held up while `capacity` events went by), or one already
  // past this sequence, keeps it, and this event is lost: the reader counts
  // it as dropped, since the slot never shows this sequence whole.
  std::uint64_t held = slot.lock.load(std::memory_order_relaxed);
  if ((held & 1) != 0 || held >= 2 * sequence + 1 ||
      !slot.lock.compare_exchange_strong(held, 2 * sequence + 1,
                                         std::memory_order_relaxed))
    return;
  // Orders the odd mark before the words: a reader that sees a new word
  // then sees the slot's lock changed.
  std::atomic_thread_fence(std::memory_order_release);
  for (int i = 0; i < kWords; ++i)
    slot.words[i].store(words[i], std::memory_order_relaxed);
  slot.lock.store(2 * sequence + 2, std::memory_order_release);
}

TraceRing::Contents TraceRing::collect() const {
  Contents contents;
  const std::uint64_t end = next_.load(std::memory_order_acquire);
  const std::uint64_t size = mask_ + 1;
  const std::uint64_t begin = end - first_ > size ? end - size : first_;
  contents.dropped = begin - first_;
  contents.events.reserve(end - begin);
  for (std::uint64_t sequence = begin; sequence < end; ++sequence) {
    const Slot& slot = slots_[sequence & mask_];
    const std::uint64_t before = slot.lock.load(std::memory_order_acquire);
    std::uint64_t words[kWords];
    for (int i = 0; i < kWords; ++i)
      words[i] = slot.words[i].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    const std::uint64_t after = slot.lock.load(std::memory_order_relaxed);
    if (before != 2 * sequence + 2 || after != before) {
      ++contents.dropped;  // overwritten since, or still being written
      continue;
    }
    contents.events.push_back(unpack(words));
  }
  return contents;
}

}  // namespace accel::trace::detail

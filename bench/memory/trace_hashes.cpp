// trace_hashes: one hash per recorded training trace (tools/traces/) of what
// the core caching allocator decides on it, so that a change meant to keep
// every decision (a faster path, a cheaper stamp) can be checked against the
// commit before: build both, run both, compare the lines.
//
// Per trace, 9 passes from an empty cache on one stream, three runs:
//   placements - each allocation's place: (segment number, offset), the
//                segment number counting the device allocations in order;
//                no statistics read until the end (reading them returns
//                held blocks, which changes later placements);
//   stats      - every stats() figure read every 997 events, the peaks reset
//                after each read, and the placements of the same run;
//   history    - recordMemoryHistory(All, 4000 entries) from the start; each
//                pass's snapshot trace (action, place, size, stream; not the
//                times) and segments.
// Each line also gives the segments and reserved bytes at the peak of pass 1
// and pass 9 of the placements run (the creep figures).
//
// Usage: trace_hashes [TRACE_DIR] (default: the build's tools/traces).
// Thread-safety: a single-threaded program.
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "accel/memory/caching_allocator.h"
#include "memreplay_trace.h"
#include "traces/recorded_traces.h"

namespace {

using accel::DataPtr;
using accel::Device;
using accel::DeviceIndex;
using accel::DeviceType;
using accel::Stream;
using accel::memory::CachingAllocator;

constexpr int kPasses = 9;
constexpr std::size_t kStatsEvery = 997;

// FNV-1a over bytes.
class Hash {
 public:
  void bytes(const void* data, std::size_t size) noexcept {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) {
      value_ ^= p[i];
      value_ *= 0x100000001b3ULL;
    }
  }
  void word(std::uint64_t v) noexcept { bytes(&v, sizeof v); }
  [[nodiscard]] std::uint64_t value() const noexcept { return value_; }

 private:
  std::uint64_t value_ = 0xcbf29ce484222325ULL;
};

// Address ranges only, numbered in the order the device lent them.
class NumberedRanges final : public accel::memory::SegmentSource {
 public:
  void* allocateSegment(DeviceIndex, std::size_t bytes) override {
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) return nullptr;
    ranges_[static_cast<std::byte*>(p)] = Range{bytes, next_++};
    return p;
  }
  void freeSegment(DeviceIndex, void* ptr, std::size_t bytes) noexcept override {
    ranges_.erase(static_cast<std::byte*>(ptr));
    munmap(ptr, bytes);
  }
  // (segment number, offset) of an address inside a lent range.
  void place(const void* ptr, Hash& hash) const {
    auto* address = static_cast<std::byte*>(const_cast<void*>(ptr));
    auto after = ranges_.upper_bound(address);
    if (after == ranges_.begin() ||
        address >= std::prev(after)->first + std::prev(after)->second.size) {
      hash.word(~std::uint64_t{0});  // a range given back since (history only)
      return;
    }
    --after;
    hash.word(after->second.number);
    hash.word(static_cast<std::uint64_t>(address - after->first));
  }

 private:
  struct Range {
    std::size_t size;
    std::uint64_t number;
  };
  std::map<std::byte*, Range> ranges_;
  std::uint64_t next_ = 0;
};

void hashStats(const accel::MemoryStats& stats, Hash& hash) {
  static_assert(std::is_trivially_copyable_v<accel::MemoryStats>);
  static_assert(sizeof(accel::MemoryStats) % sizeof(std::int64_t) == 0);
  hash.bytes(&stats, sizeof stats);
}

struct Run {
  std::uint64_t placements = 0, stats = 0, history = 0;
  std::int64_t segments_first = 0, segments_last = 0;
  std::int64_t reserved_first = 0, reserved_last = 0;
};

enum class Mode { Placements, Stats, History };

std::uint64_t replay(const accel::tool::Trace& trace, Mode mode, Run& run) {
  NumberedRanges source;
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  const Device device = Device::unchecked(DeviceType::CUDA, 0);
  if (mode == Mode::History) {
    allocator.recordHistory({accel::HistoryRecording::All, 4000, false});
  }
  Hash hash;
  std::size_t events = 0;
  for (int pass = 1; pass <= kPasses; ++pass) {
    // As replayThrough: what the trace leaves allocated is freed at the
    // pass's end, in slot order.
    std::vector<DataPtr> slots(trace.slots);
    const bool counted = mode == Mode::Placements && (pass == 1 || pass == kPasses);
    if (counted) allocator.resetPeakStats(0);
    for (const accel::tool::TraceEvent& event : trace.events) {
      if (event.kind == accel::tool::TraceEvent::Kind::Alloc) {
        slots[event.slot] =
            allocator.allocate(0, event.size, Stream(device, event.stream));
        source.place(slots[event.slot].get(), hash);
      } else {
        slots[event.slot].reset();
      }
      if (mode == Mode::Stats && ++events % kStatsEvery == 0) {
        hashStats(allocator.stats(0), hash);
        allocator.resetPeakStats(0);
      }
    }
    slots.clear();
    if (counted) {
      const accel::MemoryStats stats = allocator.stats(0);
      (pass == 1 ? run.segments_first : run.segments_last) = stats.segments.peak;
      (pass == 1 ? run.reserved_first : run.reserved_last) = stats.reserved_bytes.peak;
    }
    if (mode == Mode::History) {
      const accel::MemorySnapshot snapshot = allocator.snapshot({.device = 0});
      for (const accel::MemorySegment& segment : snapshot.segments) {
        source.place(reinterpret_cast<const void*>(segment.address), hash);
        hash.word(segment.total_size);
        for (const accel::MemoryBlock& block : segment.blocks) {
          hash.word(block.size);
          hash.word(block.requested_size);
          hash.word(static_cast<std::uint64_t>(block.state));
        }
      }
      for (const auto& entries : snapshot.device_traces) {
        hash.word(entries.size());
        for (const accel::MemoryTraceEntry& entry : entries) {
          hash.word(static_cast<std::uint64_t>(entry.action));
          if (entry.address != 0)
            source.place(reinterpret_cast<const void*>(entry.address), hash);
          hash.word(entry.size);
          hash.word(static_cast<std::uint64_t>(entry.stream.id));
        }
      }
    }
  }
  if (mode == Mode::Stats) hashStats(allocator.stats(0), hash);
  return hash.value();
}

}  // namespace

int main(int argc, char** argv) try {
  const std::string directory = argc > 1 ? argv[1] : ACCEL_TRAINING_TRACE_DIR;
  for (const std::string& name :
       accel::tool::recordedTraceNames(ACCEL_TRAINING_TRACE_NAMES)) {
    const accel::tool::Trace trace = accel::tool::loadRecordedTrace(directory, name);
    Run run;
    run.placements = replay(trace, Mode::Placements, run);
    run.stats = replay(trace, Mode::Stats, run);
    run.history = replay(trace, Mode::History, run);
    std::printf(
        "%-32s placements %016llx stats %016llx history %016llx segments at the peak "
        "%lld / %lld, reserved %lld / %lld (pass 1 / 9)\n",
        name.c_str(), static_cast<unsigned long long>(run.placements),
        static_cast<unsigned long long>(run.stats),
        static_cast<unsigned long long>(run.history),
        static_cast<long long>(run.segments_first),
        static_cast<long long>(run.segments_last),
        static_cast<long long>(run.reserved_first),
        static_cast<long long>(run.reserved_last));
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "trace_hashes: %s\n", e.what());
  return 1;
}

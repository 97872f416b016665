#include "memreplay_trace.h"

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "accel/error.h"
#include "accel/memory/caching_allocator.h"

namespace accel::tool {
namespace {

// A device that only hands out address ranges: the allocator never touches
// the memory it manages, so a replay needs none.
class SimulatedDevice final : public memory::SegmentSource {
 public:
  SimulatedDevice(std::size_t capacity, std::size_t page_size)
      : capacity_(capacity), page_size_(page_size) {}

  void* allocateSegment(DeviceIndex, std::size_t bytes) override {
    if (bytes > capacity_ - used_) return nullptr;
    used_ += bytes;
    return take(bytes);
  }
  void freeSegment(DeviceIndex, void*, std::size_t bytes) noexcept override {
    used_ -= bytes;
  }
  DeviceMemoryInfo memoryInfo(DeviceIndex) const noexcept override {
    return {capacity_, capacity_ - used_};
  }
  std::size_t pageSize() const noexcept override { return page_size_; }
  void* reserveAddressRange(DeviceIndex, std::size_t bytes) override {
    return take(bytes);
  }
  bool mapPages(DeviceIndex, void*, std::size_t bytes) override {
    if (bytes > capacity_ - used_) return false;
    used_ += bytes;
    return true;
  }
  void unmapPages(DeviceIndex, void*, std::size_t bytes) noexcept override {
    used_ -= bytes;
  }

 private:
  void* take(std::size_t bytes) {
    const std::uintptr_t at = next_;
    next_ += (bytes + (std::uintptr_t{1} << 21)) & ~((std::uintptr_t{1} << 21) - 1);
    return reinterpret_cast<void*>(at);
  }

  // The allocator calls a source under a per-device lock; one device here.
  const std::size_t capacity_;
  const std::size_t page_size_;
  std::size_t used_ = 0;
  std::uintptr_t next_ = std::uintptr_t{1} << 44;
};

[[noreturn]] void badLine(std::string_view name, std::size_t line,
                          std::string_view what) {
  throw InvalidArgument(accel::detail::concat(
      name, ":", line, ": ", what,
      " (expected 'alloc ADDRESS SIZE [STREAM]' or 'free ADDRESS [STREAM]')"));
}

template <typename Number>
bool parseNumber(std::string_view text, Number& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

Trace parseTrace(std::istream& in, std::string_view name, bool lenient_frees) {
  Trace trace;
  std::unordered_map<std::string, std::uint32_t> live;
  std::string text;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    std::istringstream words(text);
    std::string action, address, third, fourth, extra;
    words >> action;
    if (action.empty() || action[0] == '#') continue;
    words >> address >> third >> fourth >> extra;
    if (address.empty()) badLine(name, line, "missing ADDRESS");
    if (!extra.empty()) badLine(name, line, "too many fields");
    TraceEvent event;
    if (action == "alloc") {
      if (!parseNumber(third, event.size))
        badLine(name, line, "SIZE is not a byte count");
      if (!fourth.empty() && !parseNumber(fourth, event.stream)) {
        badLine(name, line, "STREAM is not an integer");
      }
      auto [it, inserted] = live.emplace(address, trace.slots);
      if (!inserted) {
        badLine(name, line,
                accel::detail::concat("address ", address,
                                      " is allocated again without a free"));
      }
      event.slot = trace.slots++;
    } else if (action == "free") {
      if (!fourth.empty()) badLine(name, line, "too many fields");
      if (!third.empty() && !parseNumber(third, event.stream)) {
        badLine(name, line, "STREAM is not an integer");
      }
      auto found = live.find(address);
      if (found == live.end()) {
        if (lenient_frees) continue;
        badLine(
            name, line,
            accel::detail::concat("address ", address, " is freed but not allocated"));
      }
      event.kind = TraceEvent::Kind::Free;
      event.slot = found->second;
      live.erase(found);
    } else {
      badLine(name, line, accel::detail::concat("unknown action '", action, "'"));
    }
    trace.events.push_back(event);
  }
  return trace;
}

ReplayResult replayTrace(const Trace& trace, const ReplayOptions& options) {
  SimulatedDevice device(options.capacity, options.page_size);
  memory::CachingAllocator allocator(DeviceType::CUDA, 1, device, options.settings);
  const Device where = Device::unchecked(DeviceType::CUDA, 0);
  std::vector<DataPtr> slots(trace.slots);
  ReplayResult result;
  const auto start = std::chrono::steady_clock::now();
  for (const TraceEvent& event : trace.events) {
    if (event.kind == TraceEvent::Kind::Alloc) {
      try {
        slots[event.slot] =
            allocator.allocate(0, event.size, Stream(where, event.stream));
      } catch (const OutOfMemory&) {
        // counted in the allocator's num_ooms
      }
      ++result.allocs;
    } else {
      slots[event.slot].reset();
      ++result.frees;
    }
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  result.events = trace.events.size();
  result.ns_per_op =
      result.events == 0
          ? 0.0
          : static_cast<double>(
                std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count()) /
                static_cast<double>(result.events);
  const MemoryStats stats = allocator.stats(0);
  result.device_allocs = stats.num_device_alloc;
  result.device_frees = stats.num_device_free;
  result.peak_reserved = stats.reserved_bytes.peak;
  result.peak_allocated = stats.allocated_bytes.peak;
  result.peak_requested = stats.requested_bytes.peak;
  result.peak_inactive_split = stats.inactive_split_bytes.peak;
  result.ooms = stats.num_ooms;
  slots.clear();
  return result;
}

double replayWithMalloc(const Trace& trace) {
  std::vector<void*> slots(trace.slots, nullptr);
  const auto start = std::chrono::steady_clock::now();
  for (const TraceEvent& event : trace.events) {
    if (event.kind == TraceEvent::Kind::Alloc) {
      slots[event.slot] = std::malloc(event.size == 0 ? 1 : event.size);
    } else {
      std::free(slots[event.slot]);
      slots[event.slot] = nullptr;
    }
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  for (void* left : slots) std::free(left);
  return trace.events.empty()
             ? 0.0
             : static_cast<double>(
                   std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed)
                       .count()) /
                   static_cast<double>(trace.events.size());
}

double replayThrough(const Trace& trace, Allocator& allocator) {
  std::vector<DataPtr> slots(trace.slots);
  const auto start = std::chrono::steady_clock::now();
  for (const TraceEvent& event : trace.events) {
    if (event.kind == TraceEvent::Kind::Alloc) {
      slots[event.slot] = allocator.allocate(event.size);
    } else {
      slots[event.slot].reset();
    }
  }
  const auto elapsed = std::chrono::steady_clock::now() - start;
  slots.clear();
  return trace.events.empty()
             ? 0.0
             : static_cast<double>(
                   std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed)
                       .count()) /
                   static_cast<double>(trace.events.size());
}

}  // namespace accel::tool

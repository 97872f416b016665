#include "accel/kit/address_map.h"

#include <array>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "accel/error.h"
#include "accel/hook_catalogue.h"

namespace accel::kit {
namespace {

using RangeMap = std::map<std::uintptr_t, AddressRange>;

const void* asPointer(std::uintptr_t address) noexcept {
  return reinterpret_cast<const void*>(address);
}

// The range of `ranges` holding `address`, or end(): the last range starting
// at or below it, if it reaches that far.
RangeMap::const_iterator findContaining(const RangeMap& ranges,
                                        std::uintptr_t address) noexcept {
  auto it = ranges.upper_bound(address);
  if (it == ranges.begin()) return ranges.end();
  --it;
  return it->second.contains(address) ? it : ranges.end();
}

}  // namespace

struct AddressMap::State {
  mutable std::shared_mutex mutex;
  RangeMap live;
  std::array<std::size_t, 2> live_count{};  // by MemoryKind
  // A ring of the last kRememberedFrees erased ranges, newest at freed_next - 1.
  std::array<AddressRange, kRememberedFrees> freed{};
  std::size_t freed_next = 0;
  std::size_t freed_count = 0;
};

AddressMap::AddressMap(DeviceType backend)
    : backend_(backend), state_(std::make_unique<State>()) {}

AddressMap::~AddressMap() = default;

void AddressMap::insert(const void* base, std::size_t size, Device device,
                        MemoryKind kind) {
  const auto begin = reinterpret_cast<std::uintptr_t>(base);
  ACCEL_CHECK(base != nullptr && size != 0 && begin + size > begin, InvalidArgument,
              "AddressMap of '", deviceTypeName(backend_), "': cannot record ", size,
              " bytes at ", base,
              "; a range needs a non-null base, a non-zero size and must not wrap "
              "around the address space");
  std::unique_lock<std::shared_mutex> lock(state_->mutex);
  RangeMap& live = state_->live;
  auto next = live.lower_bound(begin);
  const AddressRange* clash = nullptr;
  if (next != live.end() && next->first < begin + size) clash = &next->second;
  if (next != live.begin() && std::prev(next)->second.contains(begin)) {
    clash = &std::prev(next)->second;
  }
  ACCEL_CHECK(clash == nullptr, InvalidArgument, "AddressMap of '",
              deviceTypeName(backend_), "': the ", size, " bytes at ", base, " on ",
              device, " overlap the live range of ", clash->size, " bytes at ",
              asPointer(clash->begin), " on ", clash->device,
              "; erase a range when its memory is freed, before the address is reused");
  live.emplace(begin, AddressRange{begin, size, device, kind});
  ++state_->live_count[static_cast<std::size_t>(kind)];
}

bool AddressMap::erase(const void* base) noexcept {
  const auto begin = reinterpret_cast<std::uintptr_t>(base);
  std::unique_lock<std::shared_mutex> lock(state_->mutex);
  auto it = state_->live.find(begin);
  if (it == state_->live.end()) return false;
  state_->freed[state_->freed_next] = it->second;
  state_->freed_next = (state_->freed_next + 1) % kRememberedFrees;
  if (state_->freed_count < kRememberedFrees) ++state_->freed_count;
  --state_->live_count[static_cast<std::size_t>(it->second.kind)];
  state_->live.erase(it);
  return true;
}

std::optional<AddressRange> AddressMap::find(const void* ptr) const noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::shared_lock<std::shared_mutex> lock(state_->mutex);
  auto it = findContaining(state_->live, address);
  if (it == state_->live.end()) return std::nullopt;
  return it->second;
}

Device AddressMap::deviceOf(const void* ptr) const {
  const auto address = reinterpret_cast<std::uintptr_t>(ptr);
  std::shared_lock<std::shared_mutex> lock(state_->mutex);
  auto it = findContaining(state_->live, address);
  if (it != state_->live.end()) {
    const AddressRange& range = it->second;
    if (range.kind == MemoryKind::Device) return range.device;
    throw InvalidArgument(detail::concat(
        ptr, " is pinned host memory of '", deviceTypeName(backend_), "' (inside the ",
        range.size, "-byte buffer at ", asPointer(range.begin),
        "), which lives on the CPU, not on a device; ",
        hookInfo(HookId::isPinnedPtr).name, "() recognises it"));
  }
  // Newest first: the most recent owner of an address is the one to report.
  for (std::size_t n = 1; n <= state_->freed_count; ++n) {
    const AddressRange& range =
        state_->freed[(state_->freed_next + kRememberedFrees - n) % kRememberedFrees];
    if (range.contains(address)) {
      throw InvalidArgument(detail::concat(
          ptr, " points into memory of '", deviceTypeName(backend_),
          "' that was freed (the ", range.size, "-byte ",
          range.kind == MemoryKind::Pinned ? "pinned buffer" : "allocation", " at ",
          asPointer(range.begin), " on ", range.device,
          "); a pointer is only valid while its DataPtr is alive"));
    }
  }
  throw InvalidArgument(detail::concat(
      ptr, " is not memory allocated by '", deviceTypeName(backend_), "' (",
      state_->live_count[0], " live device allocations); pass a pointer from its ",
      hookInfo(HookId::getDeviceAllocator).name,
      "(index).allocate() while that allocation is alive, or ask the backend that owns "
      "it"));
}

bool AddressMap::isPinned(const void* ptr) const noexcept {
  const std::optional<AddressRange> range = find(ptr);
  return range && range->kind == MemoryKind::Pinned;
}

std::size_t AddressMap::count(MemoryKind kind) const noexcept {
  std::shared_lock<std::shared_mutex> lock(state_->mutex);
  return state_->live_count[static_cast<std::size_t>(kind)];
}

}  // namespace accel::kit

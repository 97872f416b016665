// AddressMap: which device (or pinned host buffer) a pointer belongs to.
//
// getDeviceFromPtr(p) and isPinnedPtr(p) must accept interior pointers and
// must answer a foreign or freed pointer with a clear error (or false), never
// a crash. A backend records each allocation it hands out (device memory and
// pinned host memory) and answers both hooks with one call:
//
//   accel::kit::AddressMap addresses_{type};
//   // in allocate():   addresses_.insert(p, bytes, device, MemoryKind::Device);
//   // in the deleter:  addresses_.erase(p);
//   Device getDeviceFromPtrImpl(const void* p) const override {
//     return addresses_.deviceOf(p);
//   }
//   bool isPinnedPtrImpl(const void* p) const override {
//     return addresses_.isPinned(p);
//   }
//
// A backend whose device memory is one reserved range per device (openreg)
// inserts that range once per device instead of every allocation.
//
// Lookups are O(log n) in the number of live ranges and share a reader lock;
// the last kRememberedFrees erased ranges are remembered so that a pointer
// into freed memory is reported as freed, not as unknown.
//
// Thread-safety: every member is thread-safe.
// Lifetime: the map owns no memory; it must outlive the deleters that erase
// from it (a backend keeps it in its never-destroyed hooks or runtime).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "accel/device.h"
#include "accel/export.h"

namespace accel::kit {

enum class MemoryKind : std::uint8_t {
  Device,  // memory of a device of the backend
  Pinned,  // page-locked host memory the backend handed out
};

struct AddressRange {
  std::uintptr_t begin = 0;
  std::size_t size = 0;
  Device device;  // the device the memory is on; the CPU for pinned memory
  MemoryKind kind = MemoryKind::Device;

  [[nodiscard]] constexpr bool contains(std::uintptr_t address) const noexcept {
    return address >= begin && address - begin < size;
  }
};

class ACCEL_API AddressMap {
 public:
  // Erased ranges kept for the "was freed" diagnosis.
  static constexpr int kRememberedFrees = 64;

  // `backend` names the owner in messages ("is not memory allocated by 'openreg'").
  explicit AddressMap(DeviceType backend);
  ~AddressMap();
  AddressMap(const AddressMap&) = delete;
  AddressMap& operator=(const AddressMap&) = delete;

  // Records [base, base + size). Throws InvalidArgument for a null base, a
  // zero size, a range that wraps around the address space or one that
  // overlaps a live range (naming both); std::bad_alloc.
  void insert(const void* base, std::size_t size, Device device, MemoryKind kind);
  // Forgets the range that starts at `base` and remembers it as freed.
  // Returns false (and changes nothing) if no live range starts there.
  bool erase(const void* base) noexcept;

  // The live range holding `ptr` (interior pointers count). Never throws.
  [[nodiscard]] std::optional<AddressRange> find(const void* ptr) const noexcept;
  // The device of device memory holding `ptr`: getDeviceFromPtr's contract.
  // Throws InvalidArgument saying that ptr is pinned host memory, points into
  // freed memory of the backend (naming the allocation it belonged to), or is
  // not the backend's memory at all.
  [[nodiscard]] Device deviceOf(const void* ptr) const;
  // True if `ptr` lies in a live pinned range: isPinnedPtr's contract.
  [[nodiscard]] bool isPinned(const void* ptr) const noexcept;

  // Live ranges of one kind. Never throws.
  [[nodiscard]] std::size_t count(MemoryKind kind) const noexcept;

 private:
  struct State;
  DeviceType backend_;
  std::unique_ptr<State> state_;
};

}  // namespace accel::kit

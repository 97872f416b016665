// PinnedMemory: openreg's allocator of "page-locked" host memory.
//
// Pinned memory is host memory the backend knows about: page-aligned blocks
// from mmap, recorded in the runtime's kit::AddressMap so that isPinnedPtr
// answers for interior pointers too. openreg does not mlock() the pages: a simulated
// device gains nothing from it, and containers allow only a little locked
// memory (RLIMIT_MEMLOCK); what frameworks need to test (which allocator
// memory came from, and isPinnedPtr) behaves as on real devices.
//
// Thread-safety: all members are thread-safe.
// Lifetime: one object for the process, never destroyed.
#pragma once

#include <cstddef>

#include "accel/allocator.h"

namespace accel::openreg::detail {

class PinnedMemory final : public Allocator {
 public:
  static PinnedMemory& instance() noexcept;

  // Page-aligned host memory; 0 bytes gives an empty DataPtr. Throws
  // OutOfMemory when mmap fails.
  [[nodiscard]] DataPtr allocate(std::size_t bytes) override;
  // The CPU: pinned memory is host memory.
  [[nodiscard]] Device device() const noexcept override;

 private:
  PinnedMemory() = default;
  static void free(void* context) noexcept;
};

}  // namespace accel::openreg::detail

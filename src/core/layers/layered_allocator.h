// Internal: the allocators a LayeredHooks hands out (getDeviceAllocator,
// getPinnedMemoryAllocator): each wraps the backend's allocator, tells the
// layers of every allocation and free (hook_layer.h), and lets a layer hold
// a free back (the validation layer's quarantine).
//
// The DataPtr it returns owns a LayeredBlock (its context) that owns the
// backend's DataPtr and the note-keeping layer's note on it (block_note.h);
// innerView() lets the core's caches recognise their own block behind it
// (recordStream, owns). Blocks are recycled: each thread keeps a few freed
// ones for its next allocations (no malloc and free per allocation).
//
// Thread-safety: allocate() and the deleter are thread-safe; a block may be
// freed on another thread than the one that made it.
// Lifetime: owned by its LayeredHooks, which is never destroyed.
#pragma once

#include <cstddef>

#include "accel/allocator.h"
#include "accel/device_type.h"
#include "accel/export.h"

namespace accel::detail {

class LayeredAllocator final : public Allocator {
 public:
  // Reads the backend allocator's device once: an allocator's device never
  // changes, and a backend's device() may cost more than a load (each
  // allocation and free names it to the layers).
  LayeredAllocator(DeviceType type, Allocator& inner, bool pinned) noexcept
      : type_(type), inner_(inner), device_(inner.device()), pinned_(pinned) {}

  // Asks every layer's allocating() (which may throw), allocates from the
  // backend's allocator, tells allocated(). Throws what they throw.
  [[nodiscard]] DataPtr allocate(std::size_t bytes) override;
  [[nodiscard]] Device device() const noexcept override { return device_; }

 private:
  friend struct LayeredBlock;
  DeviceType type_;
  Allocator& inner_;
  Device device_;
  bool pinned_;
};

// The context and deleter of the backend's DataPtr behind `data` when `data`
// came from a LayeredAllocator, else data's own. Never throws.
struct DataPtrView {
  void* context;
  DeleterFn deleter;
};
ACCEL_API DataPtrView innerView(const DataPtr& data) noexcept;

}  // namespace accel::detail

// Allocator and DataPtr: memory with an owned deleter and the device it is on.
//
// A DataPtr is a move-only owner of one allocation: the pointer, an opaque
// context handed to the deleter, the deleter, and the Device the memory lives
// on. Destroying or reset()ing it frees the memory. Backends return DataPtrs
// from their allocators so that callers never need to know how to free them.
//
// Thread-safety: a DataPtr is not shared; an Allocator's allocate() is
// thread-safe unless its documentation says otherwise.
#pragma once

#include <cstddef>
#include <utility>

#include "accel/device.h"
#include "accel/export.h"

namespace accel {

// Frees an allocation given its context. Must not throw.
using DeleterFn = void (*)(void* context) noexcept;

class ACCEL_API DataPtr {
 public:
  DataPtr() noexcept = default;
  DataPtr(void* data, void* context, DeleterFn deleter, Device device) noexcept
      : data_(data), context_(context), deleter_(deleter), device_(device) {}
  DataPtr(DataPtr&& other) noexcept
      : data_(scalar(other.data_)),
        context_(scalar(other.context_)),
        deleter_(other.deleter_),
        device_(scalar(other.device_)) {
    other.data_ = nullptr;
    other.context_ = nullptr;
    other.deleter_ = nullptr;
  }
  DataPtr& operator=(DataPtr&& other) noexcept {
    if (this != &other) [[likely]] {
      reset();
      data_ = scalar(other.data_);
      context_ = scalar(other.context_);
      deleter_ = other.deleter_;
      device_ = scalar(other.device_);
      other.data_ = nullptr;
      other.context_ = nullptr;
      other.deleter_ = nullptr;
    }
    return *this;
  }
  DataPtr(const DataPtr&) = delete;
  DataPtr& operator=(const DataPtr&) = delete;
  ~DataPtr() { reset(); }

  [[nodiscard]] void* get() const noexcept { return data_; }
  [[nodiscard]] void* context() const noexcept { return context_; }
  [[nodiscard]] DeleterFn deleter() const noexcept { return deleter_; }
  [[nodiscard]] Device device() const noexcept { return device_; }
  explicit operator bool() const noexcept { return data_ != nullptr; }

  // Frees the memory now (if owned) and leaves this DataPtr empty.
  void reset() noexcept {
    if (deleter_ != nullptr) deleter_(context_);
    data_ = nullptr;
    context_ = nullptr;
    deleter_ = nullptr;
  }
  // Gives up ownership; the caller must call the returned deleter on context.
  [[nodiscard]] std::pair<void*, DeleterFn> releaseContext() noexcept {
    std::pair<void*, DeleterFn> out{context_, deleter_};
    data_ = nullptr;
    context_ = nullptr;
    deleter_ = nullptr;
    return out;
  }
  void swap(DataPtr& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(context_, other.context_);
    std::swap(deleter_, other.deleter_);
    std::swap(device_, other.device_);
  }

 private:
  // A move reads each field as it was written: an allocator has usually
  // just written the DataPtr it returns field by field (the device as its
  // type byte and its index byte), and a load wider than the stores it reads
  // cannot be forwarded from the store buffer. Compilers pair the pointer
  // and the context into one 16-byte load when vectorising (GCC at -O2) and
  // read the device as one 2-byte load; the two stalls were 8 % of a
  // training-trace replay (docs/design-notes.md). The empty asm keeps each
  // value in a register of its own width.
  template <typename T>
  static T scalar(T value) noexcept {
#if defined(__GNUC__)
    asm("" : "+r"(value));
#endif
    return value;
  }
  static Device scalar(Device device) noexcept {
    return Device::unchecked(scalar(device.type()), scalar(device.index()));
  }

  void* data_ = nullptr;
  void* context_ = nullptr;
  DeleterFn deleter_ = nullptr;
  Device device_;
};

class ACCEL_API Allocator {
 public:
  virtual ~Allocator();
  // Allocates `bytes` (0 gives an empty DataPtr on the allocator's device).
  // Throws OutOfMemory when the memory cannot be had.
  [[nodiscard]] virtual DataPtr allocate(std::size_t bytes) = 0;
  // The device allocations come from (CPU for pinned host memory).
  [[nodiscard]] virtual Device device() const noexcept = 0;
};

}  // namespace accel

#include "raw_allocators.h"

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>

#include "accel/error.h"
#include "cuda_error.h"
#include "current_device.h"

namespace accel::cuda::detail {
namespace {

struct DeviceBlock {
  void* data;
  DeviceIndex device;
};

class DeviceAllocator final : public Allocator {
 public:
  explicit DeviceAllocator(DeviceIndex index) : device_(DeviceType::CUDA, index) {}

  DataPtr allocate(std::size_t bytes) override {
    if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, device_);
    DeviceContext context(device_.index());
    void* data = nullptr;
    checkCuda(cudaMalloc(&data, bytes), "cudaMalloc (device allocator)");
    auto* block = new DeviceBlock{data, device_.index()};
    return DataPtr(data, block, &DeviceAllocator::free, device_);
  }
  Device device() const noexcept override { return device_; }

 private:
  static void free(void* context) noexcept {
    auto* block = static_cast<DeviceBlock*>(context);
    (void)succeeded(cudaFree(block->data));  // any context will do for cudaFree
    delete block;
  }
  Device device_;
};

class PinnedAllocator final : public Allocator {
 public:
  DataPtr allocate(std::size_t bytes) override {
    if (bytes == 0) return DataPtr(nullptr, nullptr, nullptr, Device());
    void* data = nullptr;
    checkCuda(cudaHostAlloc(&data, bytes, cudaHostAllocDefault),
              "cudaHostAlloc (pinned memory allocator)");
    return DataPtr(data, data, &PinnedAllocator::free, Device());
  }
  Device device() const noexcept override { return Device(); }

 private:
  static void free(void* context) noexcept { (void)succeeded(cudaFreeHost(context)); }
};

}  // namespace

Allocator& deviceAllocator(DeviceIndex index) {
  static std::array<std::atomic<DeviceAllocator*>, kMaxDevicesPerType> allocators{};
  DeviceAllocator* allocator = allocators[index].load(std::memory_order_acquire);
  if (allocator != nullptr) return *allocator;
  auto* fresh = new DeviceAllocator(index);  // never destroyed
  if (allocators[index].compare_exchange_strong(allocator, fresh,
                                                std::memory_order_acq_rel)) {
    return *fresh;
  }
  delete fresh;
  return *allocator;
}

Allocator& pinnedAllocator() {
  static PinnedAllocator* const allocator = new PinnedAllocator();  // never destroyed
  return *allocator;
}

}  // namespace accel::cuda::detail

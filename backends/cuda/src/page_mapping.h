// PageMapping: expandable segments' page mapping on the CUDA driver's
// virtual memory API (accel/memory/segment_source.h, "page mapping").
//
// The driver has no partial unmap (cuMemUnmap takes back a whole mapping),
// while the caching allocator shrinks a segment from its tail by any number
// of pages; so every page gets its own physical allocation: mapping n pages
// is n x (cuMemCreate + cuMemMap) followed by one cuMemSetAccess, unmapping
// them n x (cuMemUnmap + cuMemRelease). The page size is the least common
// multiple of every device's recommended granularity (2 MiB on current
// GPUs): the caching allocator has one page size, and a page must be whole
// granules of the device it is mapped on. A device's pages are made
// accessible to it and to every device that can access it as a peer
// (cuDeviceCanAccessPeer), as cudaMalloc memory is.
//
// Only the driver is used (driver.h): no runtime call, so the fake
// libcuda.so.1 of tests/cuda exercises all of it. Callers make the device's
// context current first where the driver needs one (device_memory.cpp).
//
// Thread-safety: thread-safe (one mutex around the page table).
// Lifetime: must outlive every mapping it made; the backend never destroys
// its instance.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "accel/device.h"
#include "driver.h"

namespace accel::cuda::detail {

class PageMapping {
 public:
  // Queries the page size; never throws (a failure is kept as the reason).
  explicit PageMapping(const Driver& driver) noexcept;

  // The page size in bytes; 0 when page mapping is unavailable.
  [[nodiscard]] std::size_t pageSize() const noexcept { return page_size_; }
  // Why pageSize() is 0 ("the NVIDIA driver lacks cuMemCreate, ..."); empty
  // otherwise.
  [[nodiscard]] const std::string& unavailableReason() const noexcept { return reason_; }

  // Reserves `bytes` (a multiple of pageSize()) of device address space;
  // nullptr when the driver is out of memory. Throws DeviceError naming
  // cuMemAddressReserve for any other failure, InvalidArgument for a size
  // that is not whole pages.
  [[nodiscard]] void* reserve(DeviceIndex index, std::size_t bytes);
  // Frees a range from reserve() whose pages are all unmapped.
  void release(void* base, std::size_t bytes) noexcept;
  // Backs [address, address + bytes) (whole pages inside a reserved range)
  // with device `index`'s memory, readable and writable by that device and
  // its peers.
  // False when the device is out of memory; throws DeviceError naming the
  // failing call otherwise. Either way nothing stays mapped on failure.
  [[nodiscard]] bool map(DeviceIndex index, void* address, std::size_t bytes);
  // Unmaps and frees whole pages mapped by map().
  void unmap(void* address, std::size_t bytes) noexcept;

  // Pages mapped now (for tests and diagnostics).
  [[nodiscard]] std::size_t mappedPages() const;

 private:
  void unmapLocked(std::uintptr_t begin, std::uintptr_t end) noexcept;

  const Driver& driver_;
  std::size_t page_size_ = 0;
  // Per device: the devices its pages are made accessible to.
  std::vector<std::vector<CUmemAccessDesc>> access_;
  std::string reason_;
  mutable std::mutex mutex_;
  std::map<std::uintptr_t, CUmemGenericAllocationHandle> pages_;  // by address
};

}  // namespace accel::cuda::detail

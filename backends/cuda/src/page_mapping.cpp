#include "page_mapping.h"

#include <numeric>
#include <string>
#include <vector>

#include "accel/adapter/failure.h"

namespace accel::cuda::detail {
namespace {

CUmemAllocationProp deviceProp(DeviceIndex index) noexcept {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = index;
  return prop;
}

[[noreturn]] void failCall(const Driver& d, CUresult result, const char* call,
                           DeviceIndex index, std::size_t bytes) {
  ACCEL_ADAPTER_CHECK(false, adapter::DeviceError, call,
                      " failed on cuda:", static_cast<int>(index), " (", bytes,
                      " bytes of an expandable segment): ", driverErrorName(d, result));
  __builtin_unreachable();
}

}  // namespace

PageMapping::PageMapping(const Driver& driver) noexcept : driver_(driver) {
  try {
    if (!driver.available()) {
      reason_ = driver.reason;
      return;
    }
    if (!driver.vmm_missing.empty()) {
      reason_ = "the NVIDIA driver lacks " + driver.vmm_missing +
                " (the virtual memory API); update the driver";
      return;
    }
    // One page size for every device (the caching allocator has one): the
    // least common multiple of the devices' granularities, so that a page is
    // whole granules wherever it is mapped (they are powers of two: the
    // largest, 2 MiB on current GPUs).
    std::size_t page = 1;
    for (int device = 0; device < driver.device_count; ++device) {
      const CUmemAllocationProp prop = deviceProp(static_cast<DeviceIndex>(device));
      std::size_t granularity = 0;
      const CUresult result = driver.memGetAllocationGranularity(
          &granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
      if (result != CUDA_SUCCESS || granularity == 0) {
        reason_ =
            "cuMemGetAllocationGranularity failed on cuda:" + std::to_string(device) +
            ": " +
            (result != CUDA_SUCCESS ? driverErrorName(driver, result)
                                    : std::string("granularity 0"));
        return;
      }
      page = std::lcm(page, granularity);
    }
    // Who may touch device i's pages: i, and every device that can access
    // i's memory as a peer (cudaMalloc memory is reachable from peers once
    // they enable peer access; mapped memory only from devices named here).
    access_.resize(static_cast<std::size_t>(driver.device_count));
    for (int owner = 0; owner < driver.device_count; ++owner) {
      for (int peer = 0; peer < driver.device_count; ++peer) {
        int can = 0;
        if (peer != owner &&
            (driver.deviceCanAccessPeer == nullptr ||
             driver.deviceCanAccessPeer(&can, peer, owner) != CUDA_SUCCESS || can == 0)) {
          continue;
        }
        CUmemAccessDesc access{};
        access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        access.location.id = peer;
        access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        access_[static_cast<std::size_t>(owner)].push_back(access);
      }
    }
    page_size_ = page;
  } catch (...) {
    page_size_ = 0;
    access_.clear();
    reason_ = "out of memory while querying the page size";
  }
}

void* PageMapping::reserve(DeviceIndex index, std::size_t bytes) {
  ACCEL_ADAPTER_CHECK(page_size_ > 0, adapter::NotSupported,
                      "cuda: page mapping is unavailable: ", reason_);
  ACCEL_ADAPTER_CHECK(bytes > 0 && bytes % page_size_ == 0, adapter::InvalidArgument,
                      "cuda: an address range of ", bytes,
                      " bytes is not whole pages of ", page_size_, " bytes");
  CUdeviceptr base = 0;
  const CUresult result = driver_.memAddressReserve(&base, bytes, page_size_, 0, 0);
  if (result == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;
  if (result != CUDA_SUCCESS)
    failCall(driver_, result, "cuMemAddressReserve", index, bytes);
  return reinterpret_cast<void*>(base);
}

void PageMapping::release(void* base, std::size_t bytes) noexcept {
  if (base == nullptr || page_size_ == 0) return;
  (void)driver_.memAddressFree(reinterpret_cast<CUdeviceptr>(base), bytes);
}

bool PageMapping::map(DeviceIndex index, void* address, std::size_t bytes) {
  ACCEL_ADAPTER_CHECK(page_size_ > 0, adapter::NotSupported,
                      "cuda: page mapping is unavailable: ", reason_);
  const auto begin = reinterpret_cast<std::uintptr_t>(address);
  ACCEL_ADAPTER_CHECK(bytes > 0 && bytes % page_size_ == 0 && begin % page_size_ == 0,
                      adapter::InvalidArgument, "cuda: mapping ", bytes, " bytes at ",
                      address, " is not whole pages of ", page_size_, " bytes");
  const CUmemAllocationProp prop = deviceProp(index);
  std::lock_guard<std::mutex> lock(mutex_);
  std::uintptr_t at = begin;
  // Undoes this call's pages, then reports: OOM as false, the rest thrown.
  const auto fail = [&](CUresult result, const char* call) -> bool {
    unmapLocked(begin, at);
    if (result == CUDA_ERROR_OUT_OF_MEMORY) return false;
    failCall(driver_, result, call, index, bytes);
  };
  for (; at < begin + bytes; at += page_size_) {
    CUmemGenericAllocationHandle handle = 0;
    if (const CUresult r = driver_.memCreate(&handle, page_size_, &prop, 0);
        r != CUDA_SUCCESS) {
      return fail(r, "cuMemCreate");
    }
    if (const CUresult r = driver_.memMap(at, page_size_, 0, handle, 0);
        r != CUDA_SUCCESS) {
      (void)driver_.memRelease(handle);
      return fail(r, "cuMemMap");
    }
    try {
      pages_.emplace(at, handle);
    } catch (...) {
      (void)driver_.memUnmap(at, page_size_);
      (void)driver_.memRelease(handle);
      unmapLocked(begin, at);
      throw;
    }
  }
  const std::vector<CUmemAccessDesc>& access = access_[static_cast<std::size_t>(index)];
  if (const CUresult r = driver_.memSetAccess(begin, bytes, access.data(), access.size());
      r != CUDA_SUCCESS) {
    return fail(r, "cuMemSetAccess");
  }
  return true;
}

void PageMapping::unmap(void* address, std::size_t bytes) noexcept {
  const auto begin = reinterpret_cast<std::uintptr_t>(address);
  std::lock_guard<std::mutex> lock(mutex_);
  unmapLocked(begin, begin + bytes);
}

void PageMapping::unmapLocked(std::uintptr_t begin, std::uintptr_t end) noexcept {
  auto page = pages_.lower_bound(begin);
  while (page != pages_.end() && page->first < end) {
    (void)driver_.memUnmap(page->first, page_size_);
    (void)driver_.memRelease(page->second);
    page = pages_.erase(page);
  }
}

std::size_t PageMapping::mappedPages() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pages_.size();
}

}  // namespace accel::cuda::detail

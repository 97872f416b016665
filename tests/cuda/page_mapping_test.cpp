// Expandable segments' page mapping (backends/cuda/src/page_mapping.*)
// against the fake libcuda.so.1 (fake_driver.cpp), no GPU needed: the
// backend's driver probe and page mapping are compiled into this program,
// ctest runs it with LD_LIBRARY_PATH on the fake (with the virtual memory
// API: FAKE_VMM=yes; without it: FAKE_VMM=no). Run by hand, it skips.
//
// The caching allocator runs over a segment source that delegates page
// mapping exactly as device_memory.cpp's DevicePages does (which also makes
// the device's context current through the CUDA runtime, which the fake
// cannot start), the backend's failures thrown as the library's errors as
// the plugin boundary does.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "accel/adapter/failure.h"
#include "accel/error.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/segment_source.h"
#include "accel/plugin_status.h"
#include "driver.h"
#include "page_mapping.h"

namespace {

using accel::cuda::detail::driver;
using accel::cuda::detail::PageMapping;

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr int kOutOfMemory = 2;   // CUDA_ERROR_OUT_OF_MEMORY
constexpr int kInvalidValue = 1;  // CUDA_ERROR_INVALID_VALUE

// The fake's bookkeeping and fault injection, found in the loaded driver.
template <typename Fn>
Fn fakeFunction(const char* name) {
  void* fake = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return fake != nullptr ? reinterpret_cast<Fn>(dlsym(fake, name)) : nullptr;
}
int fakeCount(const char* name) {
  auto fn = fakeFunction<int (*)()>(name);
  return fn != nullptr ? fn() : -1;
}
void fakeFail(const char* call, int after, int result) {
  auto fn = fakeFunction<void (*)(const char*, int, int)>("fake_cuda_fail");
  ASSERT_NE(fn, nullptr);
  fn(call, after, result);
}

bool fakeSetUp(const char* vmm) {
  const char* setting = std::getenv("FAKE_VMM");
  return setting != nullptr && std::string(setting) == vmm && driver().available();
}

// Runs `fn`, throwing an adapter::Failure it throws as the library's error
// of its kind, with its message (what the core does at the plugin boundary).
template <typename Fn>
decltype(auto) asLibraryErrors(Fn&& fn) {
  try {
    return fn();
  } catch (const accel::adapter::Failure& e) {
    accel::throwPluginFailure(e.status(), "cuda", "", e.what());
  }
}

// Only expandable segments: a plain segment is always refused, so every
// allocation below is page mapping.
class MappingSource final : public accel::memory::SegmentSource {
 public:
  explicit MappingSource(PageMapping& mapping) : mapping_(mapping) {}
  void* allocateSegment(accel::DeviceIndex, std::size_t) override { return nullptr; }
  void freeSegment(accel::DeviceIndex, void*, std::size_t) noexcept override {}
  DeviceMemoryInfo memoryInfo(accel::DeviceIndex) const noexcept override {
    return {64 * kMiB, 64 * kMiB};
  }
  std::size_t pageSize() const noexcept override { return mapping_.pageSize(); }
  void* reserveAddressRange(accel::DeviceIndex index, std::size_t bytes) override {
    return asLibraryErrors([&] { return mapping_.reserve(index, bytes); });
  }
  void releaseAddressRange(accel::DeviceIndex, void* base,
                           std::size_t bytes) noexcept override {
    mapping_.release(base, bytes);
  }
  bool mapPages(accel::DeviceIndex index, void* address, std::size_t bytes) override {
    return asLibraryErrors([&] { return mapping_.map(index, address, bytes); });
  }
  void unmapPages(accel::DeviceIndex, void* address,
                  std::size_t bytes) noexcept override {
    mapping_.unmap(address, bytes);
  }

 private:
  PageMapping& mapping_;
};

accel::memory::AllocatorSettings expandable() {
  accel::memory::AllocatorSettings settings;
  settings.expandable_segments = true;
  return settings;
}

const accel::Stream kStream{accel::Device(accel::DeviceType::CUDA, 0), 0};

// A caching allocator whose every segment is expandable, mapped page by page
// through the fake driver (with the virtual memory API).
class CudaPageMappingAllocator : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fakeSetUp("yes")) GTEST_SKIP() << "run through ctest (needs the fake driver)";
    mapping_ = std::make_unique<PageMapping>(driver());
    source_ = std::make_unique<MappingSource>(*mapping_);
    allocator_ = std::make_unique<accel::memory::CachingAllocator>(
        accel::DeviceType::CUDA, 1, *source_, expandable());
  }

  accel::memory::CachingAllocator& allocator() { return *allocator_; }

  // With nothing allocated, emptyCache gives every page, physical allocation
  // and address range back to the driver.
  void expectEmptyCacheReleasesEverything() {
    allocator_->emptyCache();
    EXPECT_EQ(fakeCount("fake_cuda_mapped_pages"), 0);
    EXPECT_EQ(fakeCount("fake_cuda_live_handles"), 0);
    EXPECT_EQ(fakeCount("fake_cuda_reserved_ranges"), 0);
  }

 private:
  // Destroyed in reverse: the allocator before the source and the mapping.
  std::unique_ptr<PageMapping> mapping_;
  std::unique_ptr<MappingSource> source_;
  std::unique_ptr<accel::memory::CachingAllocator> allocator_;
};

TEST(CudaPageMapping, MapsAndUnmapsWholePages) {
  if (!fakeSetUp("yes")) GTEST_SKIP() << "run through ctest (needs the fake driver)";
  PageMapping mapping(driver());
  ASSERT_EQ(mapping.pageSize(), 2 * kMiB) << mapping.unavailableReason();

  void* base = mapping.reserve(0, 8 * kMiB);
  ASSERT_NE(base, nullptr);
  auto* bytes = static_cast<char*>(base);
  ASSERT_TRUE(mapping.map(0, base, 6 * kMiB));
  EXPECT_EQ(mapping.mappedPages(), 3U);
  EXPECT_EQ(fakeCount("fake_cuda_mapped_pages"), 3);
  EXPECT_EQ(fakeCount("fake_cuda_live_handles"), 3);
  // The tail page alone: each page has its own allocation.
  mapping.unmap(bytes + 4 * kMiB, 2 * kMiB);
  EXPECT_EQ(fakeCount("fake_cuda_live_handles"), 2);
  EXPECT_THROW((void)mapping.map(0, bytes + kMiB, 2 * kMiB),
               accel::adapter::InvalidArgument);
  EXPECT_THROW((void)mapping.reserve(0, 3 * kMiB), accel::adapter::InvalidArgument);
  mapping.unmap(base, 4 * kMiB);
  mapping.release(base, 8 * kMiB);
  EXPECT_EQ(fakeCount("fake_cuda_mapped_pages"), 0);
  EXPECT_EQ(fakeCount("fake_cuda_live_handles"), 0);
  EXPECT_EQ(fakeCount("fake_cuda_reserved_ranges"), 0);
}

TEST_F(CudaPageMappingAllocator, GrowsAndShrinksASegment) {
  {
    accel::DataPtr a = allocator().allocate(0, 3 * kMiB, kStream);
    EXPECT_EQ(fakeCount("fake_cuda_mapped_pages"), 2);
    accel::DataPtr b = allocator().allocate(0, 3 * kMiB, kStream);
    EXPECT_EQ(fakeCount("fake_cuda_mapped_pages"), 3);  // grown by one page
    EXPECT_EQ(fakeCount("fake_cuda_reserved_ranges"), 1);
    EXPECT_EQ(static_cast<char*>(b.get()), static_cast<char*>(a.get()) + 3 * kMiB);
  }
  expectEmptyCacheReleasesEverything();
}

TEST_F(CudaPageMappingAllocator, DriverOutOfMemoryIsTheAllocatorsOutOfMemory) {
  fakeFail("cuMemCreate", 1, kOutOfMemory);  // the second page fails
  EXPECT_THROW((void)allocator().allocate(0, 5 * kMiB, kStream), accel::OutOfMemory);
  EXPECT_EQ(fakeCount("fake_cuda_mapped_pages"), 0) << "a failed map left pages";
  EXPECT_EQ(fakeCount("fake_cuda_live_handles"), 0);
  fakeFail("", 0, 0);
  {
    accel::DataPtr a = allocator().allocate(0, 5 * kMiB, kStream);
    EXPECT_EQ(fakeCount("fake_cuda_mapped_pages"), 3);
  }
  expectEmptyCacheReleasesEverything();
}

TEST_F(CudaPageMappingAllocator, OtherDriverFailuresNameTheCall) {
  for (const char* call : {"cuMemMap", "cuMemSetAccess"}) {
    fakeFail(call, call == std::string("cuMemMap") ? 1 : 0, kInvalidValue);
    try {
      (void)allocator().allocate(0, 5 * kMiB, kStream);
      ADD_FAILURE() << call << " failed but the allocation succeeded";
    } catch (const accel::DeviceError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(call), std::string::npos) << what;
      EXPECT_NE(what.find("CUDA_ERROR_INVALID_VALUE"), std::string::npos) << what;
    }
    EXPECT_EQ(fakeCount("fake_cuda_mapped_pages"), 0) << call;
    EXPECT_EQ(fakeCount("fake_cuda_live_handles"), 0) << call;
  }
  fakeFail("", 0, 0);
  { accel::DataPtr a = allocator().allocate(0, kMiB * 2, kStream); }
  expectEmptyCacheReleasesEverything();
}

// Without the virtual memory API the backend offers no page mapping (the
// core then ignores expandable_segments:true with its warning), and says
// which entry points are missing (showConfig prints it).
TEST(CudaPageMapping, DriverWithoutTheApiOffersNoPagesAndNamesTheMissingCalls) {
  if (!fakeSetUp("no")) GTEST_SKIP() << "run through ctest (needs the fake driver)";
  PageMapping mapping(driver());
  EXPECT_EQ(mapping.pageSize(), 0U);
  const std::string why = mapping.unavailableReason();
  for (const char* missing : {"cuMemAddressReserve", "cuMemCreate", "cuMemMap",
                              "cuMemSetAccess", "cuMemUnmap", "cuMemRelease"}) {
    EXPECT_NE(why.find(missing), std::string::npos) << missing << ": " << why;
  }
  EXPECT_THROW((void)mapping.reserve(0, 2 * kMiB), accel::adapter::NotSupported);
}

}  // namespace

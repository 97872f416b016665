// Memory of the opencl backend: the core caching allocator over SVM, the
// pinned cache, pointer lookups and the out-of-memory path.
#include <atomic>
#include <cstring>
#include <string>

#include "opencl_test_support.h"

namespace accel::opencl::testing {
namespace {

using MemoryTest = OpenClTest;

TEST_F(MemoryTest, DeviceMemoryIsSvmTheDeviceWrites) {
  DataPtr data = hooks().getDeviceAllocator(0).allocate(1024 * sizeof(int));
  ASSERT_NE(data.get(), nullptr);
  cl_program program = buildProgram(
      0,
      "kernel void iota(global int* p) { p[get_global_id(0)] = (int)get_global_id(0); }");
  cl_int status = CL_SUCCESS;
  cl_kernel kernel = clCreateKernel(program, "iota", &status);
  ASSERT_EQ(status, CL_SUCCESS);
  ASSERT_EQ(clSetKernelArgSVMPointer(kernel, 0, data.get()), CL_SUCCESS);
  const std::size_t global = 1024;
  cl_command_queue queue = nativeQueue(hooks().getCurrentStream(0));
  ASSERT_EQ(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0,
                                   nullptr, nullptr),
            CL_SUCCESS);
  int host[1024] = {};
  ASSERT_EQ(clEnqueueSVMMemcpy(queue, CL_TRUE, host, data.get(), sizeof host, 0, nullptr,
                               nullptr),
            CL_SUCCESS);
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(host[i], i);
  clReleaseKernel(kernel);
}

TEST_F(MemoryTest, PointersResolveThroughTheSegmentMap) {
  DataPtr data = hooks().getDeviceAllocator(0).allocate(4096);
  const auto* bytes = static_cast<const char*>(data.get());
  EXPECT_EQ(hooks().getDeviceFromPtr(bytes), device0());
  EXPECT_EQ(hooks().getDeviceFromPtr(bytes + 4095), device0());  // interior
  int local = 0;
  EXPECT_THROW((void)hooks().getDeviceFromPtr(&local), InvalidArgument);
  EXPECT_FALSE(hooks().isPinnedPtr(bytes));
}

TEST_F(MemoryTest, PinnedMemoryIsHostVisibleAndRecognised) {
  DataPtr pinned = hooks().getPinnedMemoryAllocator().allocate(3000);
  ASSERT_NE(pinned.get(), nullptr);
  std::memset(pinned.get(), 7, 3000);
  EXPECT_TRUE(hooks().isPinnedPtr(pinned.get()));
  EXPECT_TRUE(hooks().isPinnedPtr(static_cast<char*>(pinned.get()) + 2999));
  int local = 0;
  EXPECT_FALSE(hooks().isPinnedPtr(&local));
  EXPECT_THROW((void)hooks().getDeviceFromPtr(pinned.get()), InvalidArgument);
}

TEST_F(MemoryTest, TooLargeAllocationIsOutOfMemoryNamingTheDeviceLimit) {
  const std::uint64_t limit = deviceInfo(0).max_allocation_bytes;
  std::atomic<int> observed{0};
  hooks().attachOutOfMemoryObserver([&](const OutOfMemoryEvent&) { ++observed; });
  try {
    (void)hooks().getDeviceAllocator(0).allocate(limit + 1);
    ADD_FAILURE() << "allocated " << limit + 1 << " bytes";
  } catch (const OutOfMemory& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("CL_DEVICE_MAX_MEM_ALLOC_SIZE"), std::string::npos) << text;
    EXPECT_NE(text.find("opencl:0"), std::string::npos) << text;
  }
  EXPECT_GE(observed.load(), 1);
  // The allocator still works afterwards.
  DataPtr small = hooks().getDeviceAllocator(0).allocate(64);
  EXPECT_NE(small.get(), nullptr);
}

// A pinned block above CL_DEVICE_MAX_MEM_ALLOC_SIZE cannot be a buffer: the
// plugin refuses it as out of memory without asking OpenCL, and the core's
// pinned cache reports OutOfMemory in its own words (the size asked for).
TEST_F(MemoryTest, TooLargePinnedAllocationIsOutOfMemory) {
  const std::uint64_t limit = deviceInfo(0).max_allocation_bytes;
  ASSERT_GT(limit, 0u);
  try {
    (void)hooks().getPinnedMemoryAllocator().allocate(limit + 1);
    ADD_FAILURE() << "pinned " << limit + 1 << " bytes";
  } catch (const OutOfMemory& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find(std::to_string(limit + 1) + " requested"), std::string::npos)
        << text;
  }
  DataPtr small = hooks().getPinnedMemoryAllocator().allocate(64);
  EXPECT_NE(small.get(), nullptr);
}

TEST_F(MemoryTest, StatsCountTheCachedSegments) {
  hooks().emptyCache();
  const MemoryStats before = hooks().memoryStats(0);
  {
    DataPtr data = hooks().getDeviceAllocator(0).allocate(3 << 20);
    const MemoryStats during = hooks().memoryStats(0);
    EXPECT_GT(during.allocated_bytes.current, before.allocated_bytes.current);
  }
  hooks().emptyCache();
  EXPECT_EQ(hooks().memoryStats(0).reserved_bytes.current, before.reserved_bytes.current);
}

TEST_F(MemoryTest, SvmAllocationWrapsAsABufferOverTheSameMemory) {
  // Two blocks of one small-pool segment: the second is interior to it.
  DataPtr first = hooks().getDeviceAllocator(0).allocate(1024);
  DataPtr data = hooks().getDeviceAllocator(0).allocate(256 * sizeof(int));
  const SvmAllocation a = svmAllocation(data.get());
  EXPECT_EQ(a.device, 0);
  EXPECT_EQ(static_cast<char*>(a.base) + a.offset, static_cast<char*>(data.get()));
  EXPECT_GE(a.bytes, a.offset + 256 * sizeof(int));
  EXPECT_EQ(svmAllocation(first.get()).base, a.base) << "one segment holds both";

  // A kernel writing through a CL_MEM_USE_HOST_PTR buffer over the
  // allocation, at the offset, writes the SVM memory itself.
  cl_int status = CL_SUCCESS;
  cl_mem buffer =
      clCreateBuffer(nativeContext(0), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, a.bytes,
                     a.base, &status);
  ASSERT_EQ(status, CL_SUCCESS);
  cl_program program =
      buildProgram(0,
                   "kernel void iota_at(global int* p, ulong first) {"
                   " p[first + get_global_id(0)] = (int)get_global_id(0) + 1; }");
  cl_kernel kernel = clCreateKernel(program, "iota_at", &status);
  ASSERT_EQ(status, CL_SUCCESS);
  const cl_ulong first_element = a.offset / sizeof(int);
  ASSERT_EQ(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), CL_SUCCESS);
  ASSERT_EQ(clSetKernelArg(kernel, 1, sizeof first_element, &first_element), CL_SUCCESS);
  const std::size_t global = 256;
  cl_command_queue queue = nativeQueue(hooks().getCurrentStream(0));
  ASSERT_EQ(clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0,
                                   nullptr, nullptr),
            CL_SUCCESS);
  int host[256] = {};
  hooks().copyDeviceToHost(host, data.get(), sizeof host, hooks().getCurrentStream(0));
  hooks().synchronizeStream(hooks().getCurrentStream(0));
  for (int i = 0; i < 256; ++i) ASSERT_EQ(host[i], i + 1) << "element " << i;
  clReleaseKernel(kernel);
  clReleaseMemObject(buffer);
}

TEST_F(MemoryTest, SvmAllocationRefusesWhatIsNotALiveDeviceAllocation) {
  int local = 0;
  EXPECT_THROW((void)svmAllocation(&local), InvalidArgument);
  EXPECT_THROW((void)svmAllocation(nullptr), InvalidArgument);
  DataPtr pinned = hooks().getPinnedMemoryAllocator().allocate(64);
  EXPECT_THROW((void)svmAllocation(pinned.get()), InvalidArgument);
  DataPtr keep = hooks().getDeviceAllocator(0).allocate(512);  // keeps the segment
  void* freed = nullptr;
  {
    DataPtr data = hooks().getDeviceAllocator(0).allocate(512);
    freed = data.get();
  }
  try {
    (void)svmAllocation(freed);
    ADD_FAILURE() << "a freed block was wrapped";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("not in a live allocation"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace accel::opencl::testing

// A fork child's frees of the CUDA memory it inherited never reach the
// runtime: the core caching allocator leaks them there (docs/lifecycle.md),
// so the backend's free path (the core's deleter) needs no fork logic.
// Its own process: this file defines cudaFree, which the backend's calls
// reach before the runtime double's, to count them.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>

#include "double_support.h"

namespace {

std::atomic<int> g_cuda_frees{0};
std::atomic<int> g_cuda_host_frees{0};
std::atomic<bool> g_in_child{false};

}  // namespace

// Counts every cudaFree of the process; in the child it only counts (the
// parent's memory must not be touched there, and the double's workers that a
// free would wait for do not exist in a child).
extern "C" __attribute__((visibility("default"))) cudaError_t cudaFree(void* ptr) {
  g_cuda_frees.fetch_add(1);
  if (g_in_child.load()) return cudaSuccess;
  using Real = cudaError_t (*)(void*);
  static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "cudaFree"));
  return real(ptr);
}

// The same for cudaFreeHost (the pinned cache's source).
extern "C" __attribute__((visibility("default"))) cudaError_t cudaFreeHost(void* ptr) {
  g_cuda_host_frees.fetch_add(1);
  if (g_in_child.load()) return cudaSuccess;
  using Real = cudaError_t (*)(void*);
  static const Real real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "cudaFreeHost"));
  return real(ptr);
}

namespace accel::cuda::testing {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// The child's exit status, or 125 when it had to be killed after 20 s.
int waitForChild(pid_t child) {
  int status = 0;
  for (int waited_ms = 0; waited_ms < 20'000; waited_ms += 2) {
    if (waitpid(child, &status, WNOHANG) == child)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    usleep(2000);
  }
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  return 125;
}

TEST(CudaFork, AChildsFreesOfInheritedMemoryNeverCallCudaFree) {
  memory::CachingAllocator& allocator = deviceCache();
  allocator.emptyCache();  // the counts below are of this test's segments only
  DataPtr kept = cuda().getDeviceAllocator(0).allocate(4 * kMiB);
  { DataPtr cached = cuda().getDeviceAllocator(0).allocate(30 * kMiB); }  // cached
  const pid_t child = fork();
  ASSERT_GE(child, 0) << "fork failed";
  if (child == 0) {
    g_in_child.store(true);
    const int frees = g_cuda_frees.load();
    kept = DataPtr();  // the core allocator's deleter
    // The allocator itself: the hooks refuse in a child (docs/lifecycle.md).
    allocator.emptyCache();
    _exit(g_cuda_frees.load() == frees ? 0 : 1);
  }
  EXPECT_EQ(waitForChild(child), 0)
      << "1: the child called cudaFree on its parent's memory; 125: it hung";
  // In the parent the same free and emptyCache do reach cudaFree (and so
  // this file's counter sees the backend's calls).
  kept = DataPtr();
  const int frees = g_cuda_frees.load();
  allocator.emptyCache();
  EXPECT_EQ(g_cuda_frees.load(), frees + 2) << "the 20 MiB and the 30 MiB segments";
}

// The pinned host cache follows the same rule (docs/lifecycle.md): a child's
// free of pinned memory it inherited, and its emptyCache, never call
// cudaFreeHost.
TEST(CudaFork, AChildsFreesOfInheritedPinnedMemoryNeverCallCudaFreeHost) {
  memory::PinnedCachingAllocator& pinned = pinnedCache();
  DataPtr kept = pinned.allocate(4096);
  { DataPtr cached = pinned.allocate(64 * 1024); }  // cached
  const pid_t child = fork();
  ASSERT_GE(child, 0) << "fork failed";
  if (child == 0) {
    g_in_child.store(true);
    const int frees = g_cuda_host_frees.load();
    kept = DataPtr();  // the pinned cache's deleter
    pinned.emptyCache();
    _exit(g_cuda_host_frees.load() == frees ? 0 : 1);
  }
  EXPECT_EQ(waitForChild(child), 0)
      << "1: the child called cudaFreeHost on its parent's pinned memory; 125: it hung";
  // In the parent the same free and emptyCache do reach cudaFreeHost.
  kept = DataPtr();
  const int frees = g_cuda_host_frees.load();
  pinned.emptyCache();
  EXPECT_EQ(g_cuda_host_frees.load(), frees + 2) << "the 4 KiB and the 64 KiB blocks";
}

}  // namespace
}  // namespace accel::cuda::testing

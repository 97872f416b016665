// What a backend adds to the core allocator's allocate+free pair: openreg's
// device allocator (getDeviceAllocator(0), as a framework calls it) beside
// the core CachingAllocator alone, in the same run.
//
// Goal: the backend's pair within 1.2x the core's. The core row
// is the same allocator behind the same Allocator interface (one virtual
// call), over a source of address ranges, on a warm cache; both rows run
// in a process that has had a second thread (as bench_memory explains,
// glibc's locks are cheaper before that, which would flatter neither row
// equally).
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <cstdlib>
#include <thread>

#include "accel/accel.h"
#include "accel/memory/caching_allocator.h"
#include "accel/openreg/openreg.h"

namespace accel::memory {
namespace {

const bool kThreaded = [] {
  std::thread([] {}).join();
  return true;
}();

class ReservedRangeSource final : public SegmentSource {
 public:
  void* allocateSegment(DeviceIndex, std::size_t bytes) override {
    void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  void freeSegment(DeviceIndex, void* ptr, std::size_t bytes) noexcept override {
    munmap(ptr, bytes);
  }
};

class CoreDeviceAllocator final : public Allocator {
 public:
  explicit CoreDeviceAllocator(CachingAllocator& allocator) : allocator_(allocator) {}
  DataPtr allocate(std::size_t bytes) override {
    return allocator_.allocate(0, bytes, Stream(device(), 0));
  }
  Device device() const noexcept override {
    return Device::unchecked(allocator_.deviceType(), 0);
  }

 private:
  CachingAllocator& allocator_;
};

void pair(benchmark::State& state, Allocator& allocator) {
  const auto size = static_cast<std::size_t>(state.range(0));
  // Through a pointer the compiler cannot follow: given the local
  // CoreDeviceAllocator (a final class) it devirtualised and inlined the
  // core row's allocate, so that row paid no virtual call while openreg's
  // paid one, and the ratio compared different things.
  Allocator* through = &allocator;
  benchmark::DoNotOptimize(through);
  through->allocate(size).reset();  // warm: the segment is cached
  for (auto _ : state) {
    DataPtr p = through->allocate(size);
    benchmark::DoNotOptimize(p.get());
  }
}

void BM_Core_Pair(benchmark::State& state) {
  ReservedRangeSource source;
  CachingAllocator core(DeviceType::CUDA, 1, source);
  CoreDeviceAllocator allocator(core);
  pair(state, allocator);
}
BENCHMARK(BM_Core_Pair)->Arg(256)->Arg(64 << 10)->Arg(4 << 20);

AcceleratorHooks& openregHooks() {
  static AcceleratorHooks* hooks = [] {
    openreg::registerBackend();
    globalContext().lazyInitDevice(openreg::deviceType());
    return &getHooks(openreg::deviceType());
  }();
  return *hooks;
}

void BM_OpenReg_DeviceAllocator_Pair(benchmark::State& state) {
  pair(state, openregHooks().getDeviceAllocator(0));
}
BENCHMARK(BM_OpenReg_DeviceAllocator_Pair)->Arg(256)->Arg(64 << 10)->Arg(4 << 20);

}  // namespace
}  // namespace accel::memory

// A real PyTorch training allocation trace (tools/traces/) replayed nine
// times in a row through a device allocator, beside glibc malloc/free on the
// same events in the same iteration.
//
// Goal (issue 17): openreg's getDeviceAllocator(0) at most 0.6x malloc/free.
// Three rows:
//   Malloc  - the events through malloc/free, the baseline;
//   Core    - the core CachingAllocator alone, behind the same Allocator
//             interface a backend exposes (one virtual call per allocation);
//   OpenReg - openreg's device allocator: the core plus what the backend adds.
// Each iteration starts from an empty cache (so pass 1 pays its device
// allocations, as a training run's first step does) and times 9 passes;
// Core and OpenReg also time the malloc replay in the same iteration and
// report x_malloc = their time / malloc's. Counters: device allocations and
// segments at the peak in pass 1 and pass 9 (creep shows as pass 9 > pass 1).
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdlib>
#include <fstream>

#include "accel/allocator.h"
#include "accel/memory/caching_allocator.h"
#include "memreplay_trace.h"
#ifdef ACCEL_BENCH_HAVE_OPENREG
#include "accel/accel.h"
#include "accel/openreg/openreg.h"
#endif

namespace accel::memory {
namespace {

constexpr int kPasses = 9;

const tool::Trace& trainingTrace() {
  static const tool::Trace trace = [] {
    std::ifstream in(ACCEL_TRAINING_TRACE);
    return tool::parseTrace(in, ACCEL_TRAINING_TRACE);
  }();
  return trace;
}

// Address ranges only (PROT_NONE, nothing backed): the allocator never
// touches the memory it manages.
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

// The core allocator behind the Allocator interface, as a backend hands it out.
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

double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

double mallocPasses() {
  const auto start = std::chrono::steady_clock::now();
  for (int pass = 0; pass < kPasses; ++pass) {
    benchmark::DoNotOptimize(tool::replayWithMalloc(trainingTrace()));
  }
  return seconds(std::chrono::steady_clock::now() - start);
}

void BM_TrainingTrace_Malloc(benchmark::State& state) {
  for (auto _ : state) state.SetIterationTime(mallocPasses());
  state.counters["events"] = static_cast<double>(trainingTrace().events.size());
}
BENCHMARK(BM_TrainingTrace_Malloc)->UseManualTime()->Unit(benchmark::kMillisecond);

// 9 passes through `allocator`, from an empty cache; `stats` and `reset`
// read and reset the figures of device 0, `empty` empties the cache.
template <typename Stats, typename Reset, typename Empty>
void passes(benchmark::State& state, Allocator& allocator, Stats stats, Reset reset,
            Empty empty) {
  double ours = 0, theirs = 0;
  std::int64_t allocs_first = 0, allocs_last = 0, segments_first = 0, segments_last = 0;
  for (auto _ : state) {
    empty();
    const auto start = std::chrono::steady_clock::now();
    for (int pass = 1; pass <= kPasses; ++pass) {
      const bool counted = pass == 1 || pass == kPasses;
      std::int64_t before = 0;
      if (counted) {
        state.PauseTiming();
        reset();
        before = stats().num_device_alloc;
        state.ResumeTiming();
      }
      benchmark::DoNotOptimize(tool::replayThrough(trainingTrace(), allocator));
      if (counted) {
        state.PauseTiming();
        const MemoryStats now = stats();
        (pass == 1 ? allocs_first : allocs_last) = now.num_device_alloc - before;
        (pass == 1 ? segments_first : segments_last) = now.segments.peak;
        state.ResumeTiming();
      }
    }
    const double elapsed = seconds(std::chrono::steady_clock::now() - start);
    state.SetIterationTime(elapsed);
    ours += elapsed;
    theirs += mallocPasses();
  }
  state.counters["x_malloc"] = ours / theirs;
  state.counters["device_allocs_pass1"] = static_cast<double>(allocs_first);
  state.counters["device_allocs_pass9"] = static_cast<double>(allocs_last);
  state.counters["segments_peak_pass1"] = static_cast<double>(segments_first);
  state.counters["segments_peak_pass9"] = static_cast<double>(segments_last);
}

void BM_TrainingTrace_Core(benchmark::State& state) {
  ReservedRangeSource source;
  CachingAllocator core(DeviceType::CUDA, 1, source);
  CoreDeviceAllocator allocator(core);
  passes(
      state, allocator, [&] { return core.stats(0); }, [&] { core.resetPeakStats(0); },
      [&] { core.emptyCache(); });
}
BENCHMARK(BM_TrainingTrace_Core)->UseManualTime()->Unit(benchmark::kMillisecond);

#ifdef ACCEL_BENCH_HAVE_OPENREG
AcceleratorHooks& openreg() {
  static AcceleratorHooks* hooks = [] {
    ::setenv("ACCEL_OPENREG_DEVICES", "1", 1);
    ::setenv("ACCEL_OPENREG_MEMORY", "1GiB", 1);
    openreg::registerBackend();
    globalContext().lazyInitDevice(openreg::deviceType());
    return &getHooks(openreg::deviceType());
  }();
  return *hooks;
}

void BM_TrainingTrace_OpenReg(benchmark::State& state) {
  AcceleratorHooks& hooks = openreg();
  passes(
      state, hooks.getDeviceAllocator(0), [&] { return hooks.memoryStats(0); },
      [&] { hooks.resetPeakMemoryStats(0); }, [&] { hooks.emptyCache(); });
}
BENCHMARK(BM_TrainingTrace_OpenReg)->UseManualTime()->Unit(benchmark::kMillisecond);
#endif

}  // namespace
}  // namespace accel::memory

// The caching allocator's hot path and a training-like replay, each next to
// its baseline in the same run.
//
// Budgets (DESIGN.md): a cached allocate+free pair <= 60 ns and
// <= 2x glibc malloc/free of the same size; with history recording (no
// stacks) <= 2x the pair without (with stacks it is measured, no budget);
// on the synthetic training trace,
// reserved/allocated at the peak <= 1.07.
//
// Baselines: glibc malloc/free of the same size; the uncached path, a
// SegmentSource that maps fresh pages for every allocation (mmap/munmap),
// which is what a device allocation without a cache costs at the least; and,
// where openreg is built, openreg's device allocation: this caching allocator
// plus openreg's wrapper (its checks read the core's block map and keep no
// record per allocation; bench_backend_pair compares the two directly). The parts
// of the pair have their own baselines: the device lock (a BiasedMutex)
// beside std::mutex, and one read of the history's trace clock, of which a
// recording pair makes two.
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <thread>

#include "accel/memory/caching_allocator.h"
#include "memory/biased_mutex.h"
#include "memory/synthetic_trace.h"
#include "memory/trace_clock.h"
#include "memreplay_trace.h"
#ifdef ACCEL_BENCH_HAVE_OPENREG
#include "accel/openreg/memory.h"
#endif

namespace accel::memory {
namespace {

class MappedPagesSource final : public SegmentSource {
 public:
  void* allocateSegment(DeviceIndex, std::size_t bytes) override {
    void* p =
        mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
  }
  void freeSegment(DeviceIndex, void* ptr, std::size_t bytes) noexcept override {
    munmap(ptr, bytes);
  }
};

const Stream kStream(Device::unchecked(DeviceType::CUDA, 0), 0);

// Every figure is taken in a process that has had a second thread, as a
// framework's has: until then glibc skips the locked instructions of its
// mutexes (std::mutex costs a fifth of what it does after), which would
// flatter the std::mutex baseline whenever no earlier benchmark made a thread.
const bool kThreaded = [] {
  std::thread([] {}).join();
  return true;
}();

void BM_Malloc_Free(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* p = std::malloc(size);
    benchmark::DoNotOptimize(p);
    std::free(p);
  }
}
BENCHMARK(BM_Malloc_Free)->Arg(256)->Arg(64 << 10)->Arg(4 << 20);

void BM_Uncached_Segment_AllocFree(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  MappedPagesSource source;
  for (auto _ : state) {
    void* p = source.allocateSegment(0, size);
    benchmark::DoNotOptimize(p);
    source.freeSegment(0, p, size);
  }
}
BENCHMARK(BM_Uncached_Segment_AllocFree)->Arg(256)->Arg(64 << 10)->Arg(4 << 20);

#ifdef ACCEL_BENCH_HAVE_OPENREG
void BM_OpenReg_AllocFree(benchmark::State& state) {
  const auto size = static_cast<std::size_t>(state.range(0));
  accel::openreg::allocate(size, 0).reset();  // initialise the runtime
  for (auto _ : state) {
    DataPtr p = accel::openreg::allocate(size, 0);
    benchmark::DoNotOptimize(p.get());
  }
}
BENCHMARK(BM_OpenReg_AllocFree)->Arg(256)->Arg(64 << 10)->Arg(4 << 20);
#endif

void cachedPair(benchmark::State& state, bool history, bool stacks = false) {
  const auto size = static_cast<std::size_t>(state.range(0));
  MappedPagesSource source;
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  if (history) allocator.recordHistory({HistoryRecording::All, 100000, stacks});
  allocator.allocate(0, size, kStream).reset();  // warm: the segment is cached
  for (auto _ : state) {
    DataPtr p = allocator.allocate(0, size, kStream);
    benchmark::DoNotOptimize(p.get());
  }
}

void BM_Cached_AllocFree(benchmark::State& state) { cachedPair(state, false); }
BENCHMARK(BM_Cached_AllocFree)->Arg(256)->Arg(64 << 10)->Arg(4 << 20);

void BM_Cached_AllocFree_History(benchmark::State& state) { cachedPair(state, true); }
BENCHMARK(BM_Cached_AllocFree_History)->Arg(256)->Arg(64 << 10)->Arg(4 << 20);

// With the C++ stack of each allocation and free (record_stack): the walk of
// the return addresses is most of it.
void BM_Cached_AllocFree_HistoryStacks(benchmark::State& state) {
  cachedPair(state, true, true);
}
BENCHMARK(BM_Cached_AllocFree_HistoryStacks)->Arg(256);

// The 64 KiB pair with its requests rotating over `streams` streams (ids
// 0..streams-1, one pair on each in turn), as a program that spreads its
// work over several queues asks; 1 is the one-stream pair beside it. Goal:
// at most 1.5x the one-stream pair.
void BM_Cached_AllocFree_Streams(benchmark::State& state) {
  const auto streams = static_cast<StreamId>(state.range(0));
  constexpr std::size_t kSize = 64 << 10;
  MappedPagesSource source;
  CachingAllocator allocator(DeviceType::CUDA, 1, source);
  const Device device = Device::unchecked(DeviceType::CUDA, 0);
  for (StreamId id = 0; id < streams; ++id)  // warm: each stream has had its block
    allocator.allocate(0, kSize, Stream(device, id)).reset();
  StreamId next = 0;
  for (auto _ : state) {
    DataPtr p = allocator.allocate(0, kSize, Stream(device, next));
    benchmark::DoNotOptimize(p.get());
    if (++next == streams) next = 0;
  }
}
BENCHMARK(BM_Cached_AllocFree_Streams)->Arg(1)->Arg(4)->Arg(16)->Arg(64);

// Two threads allocating on one device: the lock's bias is withdrawn and
// both take its inner mutex (with contention), the case a biased lock
// does not speed up.
void BM_Cached_AllocFree_TwoThreads(benchmark::State& state) {
  static MappedPagesSource source;
  static CachingAllocator allocator(DeviceType::CUDA, 1, source);
  const Stream stream(Device::unchecked(DeviceType::CUDA, 0), state.thread_index());
  for (auto _ : state) {
    DataPtr p = allocator.allocate(0, 256, stream);
    benchmark::DoNotOptimize(p.get());
  }
}
BENCHMARK(BM_Cached_AllocFree_TwoThreads)->Threads(2)->UseRealTime();

// The device lock taken and released once, as each call of a pair does.
void BM_StdMutex_LockUnlock(benchmark::State& state) {
  std::mutex mutex;
  for (auto _ : state) {
    mutex.lock();
    benchmark::ClobberMemory();
    mutex.unlock();
  }
}
BENCHMARK(BM_StdMutex_LockUnlock);

void BM_BiasedMutex_LockUnlock(benchmark::State& state) {
  accel::detail::BiasedMutex mutex;
  for (auto _ : state) {
    accel::detail::BiasedMutex::Guard lock(mutex);
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_BiasedMutex_LockUnlock);

// One timestamp of the history ring; a recording pair takes two.
void BM_TraceClock_Now(benchmark::State& state) {
  const detail::TraceClock clock;
  for (auto _ : state) benchmark::DoNotOptimize(clock.now());
}
BENCHMARK(BM_TraceClock_Now);

const tool::Trace& syntheticTrace() {
  static const tool::Trace trace = [] {
    std::istringstream text(testing::syntheticTrainingTrace({.iterations = 30}));
    return tool::parseTrace(text, "synthetic");
  }();
  return trace;
}

// Counters: device allocations, peaks and their ratio; ns per trace event.
void replay(benchmark::State& state, const char* settings) {
  tool::ReplayOptions options;
  options.settings = parseAllocatorSettings(settings);
  tool::ReplayResult result;
  double ns = 0;
  for (auto _ : state) {
    result = tool::replayTrace(syntheticTrace(), options);
    ns += result.ns_per_op;
  }
  state.counters["ns_per_op"] = ns / static_cast<double>(state.iterations());
  state.counters["device_allocs"] = static_cast<double>(result.device_allocs);
  state.counters["reserved_over_allocated"] = result.reservedOverAllocated();
  state.counters["peak_allocated_MiB"] =
      static_cast<double>(result.peak_allocated) / (1 << 20);
  state.counters["events"] = static_cast<double>(result.events);
}

void BM_Replay_Synthetic_Default(benchmark::State& state) { replay(state, ""); }
BENCHMARK(BM_Replay_Synthetic_Default)->Unit(benchmark::kMillisecond);

void BM_Replay_Synthetic_Expandable(benchmark::State& state) {
  replay(state, "expandable_segments:true");
}
BENCHMARK(BM_Replay_Synthetic_Expandable)->Unit(benchmark::kMillisecond);

void BM_Replay_Synthetic_Malloc(benchmark::State& state) {
  double ns = 0;
  for (auto _ : state) ns += tool::replayWithMalloc(syntheticTrace());
  state.counters["ns_per_op"] = ns / static_cast<double>(state.iterations());
}
BENCHMARK(BM_Replay_Synthetic_Malloc)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace accel::memory

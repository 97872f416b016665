// Each real PyTorch training allocation trace (tools/traces/, listed in
// tools/traces/traces.cmake) replayed nine times in a row through a device
// allocator, beside glibc malloc/free on the same events in the same
// iteration.
//
// Goal: openreg's getDeviceAllocator(0) at most 0.6x malloc/free.
// Three rows a trace:
//   Malloc  - the events through malloc/free, the baseline;
//   Core    - the core CachingAllocator alone, behind the same Allocator
//             interface a backend exposes (one virtual call per allocation);
//   OpenReg - openreg's device allocator: the core plus what the backend adds.
// The first trace (pytorch_cpu_training) has the rows BM_TrainingTrace_Malloc,
// _Core and _OpenReg, as in the measurements docs/performance.md quotes; the
// others add the trace's short name: BM_TrainingTrace_Core/lstm_lm.
// Each iteration starts from an empty cache (so pass 1 pays its device
// allocations, as a training run's first step does) and times 9 passes;
// Core and OpenReg also time the malloc replay in the same iteration and
// report x_malloc = their time / malloc's. Counters: device allocations and
// segments at the peak in pass 1 and pass 9 (creep shows as pass 9 > pass 1).
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "accel/allocator.h"
#include "accel/memory/caching_allocator.h"
#include "memreplay_trace.h"
#include "traces/recorded_traces.h"
#ifdef ACCEL_BENCH_HAVE_OPENREG
#include "accel/accel.h"
#include "accel/openreg/openreg.h"
#endif

namespace accel::memory {
namespace {

constexpr int kPasses = 9;

// The trace whose rows keep the names without a suffix.
constexpr std::string_view kFirstTrace = "pytorch_cpu_training";

// The build's traces, by name (file names without ".trace").
std::vector<std::string> traceNames() {
  return tool::recordedTraceNames(ACCEL_TRAINING_TRACE_NAMES);
}

// The trace called `name`. All are read on the first call, and each is
// replayed once through malloc/free: glibc raises its mmap and trim
// thresholds to the largest mapped block it has freed, so its time on a
// trace depends on what the process freed before (lstm_lm's 9 passes: 3.4 ms
// after the first trace's 16 MiB blocks, 26 ms without them, its heap top
// trimmed and grown again by ~900 brk calls). Replaying every trace first
// gives each row glibc's settled state, whichever rows a filter selects.
const tool::Trace& trainingTrace(const std::string& name) {
  static const std::map<std::string, tool::Trace> traces = [] {
    std::map<std::string, tool::Trace> out;
    for (const std::string& each : traceNames()) {
      out.emplace(each, tool::loadRecordedTrace(ACCEL_TRAINING_TRACE_DIR, each));
    }
    for (const auto& [each, trace] : out) (void)tool::replayWithMalloc(trace);
    return out;
  }();
  return traces.at(name);
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

double mallocPasses(const tool::Trace& trace) {
  const auto start = std::chrono::steady_clock::now();
  for (int pass = 0; pass < kPasses; ++pass) {
    benchmark::DoNotOptimize(tool::replayWithMalloc(trace));
  }
  return seconds(std::chrono::steady_clock::now() - start);
}

void mallocRow(benchmark::State& state, const std::string& name) {
  const tool::Trace& trace = trainingTrace(name);
  for (auto _ : state) state.SetIterationTime(mallocPasses(trace));
  state.counters["events"] = static_cast<double>(trace.events.size());
}

// 9 passes of `trace` through `allocator`, from an empty cache; `stats` and
// `reset` read and reset the figures of device 0, `empty` empties the cache.
template <typename Stats, typename Reset, typename Empty>
void passes(benchmark::State& state, const tool::Trace& trace, Allocator& allocator,
            Stats stats, Reset reset, Empty empty) {
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
      benchmark::DoNotOptimize(tool::replayThrough(trace, allocator));
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
    theirs += mallocPasses(trace);
  }
  state.counters["x_malloc"] = ours / theirs;
  state.counters["device_allocs_pass1"] = static_cast<double>(allocs_first);
  state.counters["device_allocs_pass9"] = static_cast<double>(allocs_last);
  state.counters["segments_peak_pass1"] = static_cast<double>(segments_first);
  state.counters["segments_peak_pass9"] = static_cast<double>(segments_last);
}

void coreRow(benchmark::State& state, const std::string& name) {
  ReservedRangeSource source;
  CachingAllocator core(DeviceType::CUDA, 1, source);
  CoreDeviceAllocator allocator(core);
  passes(
      state, trainingTrace(name), allocator, [&] { return core.stats(0); },
      [&] { core.resetPeakStats(0); }, [&] { core.emptyCache(); });
}

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

void openRegRow(benchmark::State& state, const std::string& name) {
  AcceleratorHooks& hooks = openreg();
  passes(
      state, trainingTrace(name), hooks.getDeviceAllocator(0),
      [&] { return hooks.memoryStats(0); }, [&] { hooks.resetPeakMemoryStats(0); },
      [&] { hooks.emptyCache(); });
}
#endif

// Malloc, Core and OpenReg rows for each trace of the build's list, in order.
bool registerRows() {
  for (const std::string& name : traceNames()) {
    const std::string suffix =
        name == kFirstTrace ? "" : "/" + tool::shortTraceName(name);
    const auto row = [&](const char* kind,
                         void (*run)(benchmark::State&, const std::string&)) {
      benchmark::RegisterBenchmark(
          (std::string("BM_TrainingTrace_") + kind + suffix).c_str(), run, name)
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
    };
    row("Malloc", mallocRow);
    row("Core", coreRow);
#ifdef ACCEL_BENCH_HAVE_OPENREG
    row("OpenReg", openRegRow);
#endif
  }
  return true;
}
const bool registered = registerRows();

}  // namespace
}  // namespace accel::memory

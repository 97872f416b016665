// The tracing layer's cost (docs/tracing.md): the same calls untraced and
// traced, in one program, on openreg.
//
//   CurrentStream/traced:0|1        getHooks(openreg).getCurrentStream(0): the
//                                   cheapest hook, so the layer's per-call cost
//                                   is most of the difference
//   DeviceAllocatorPair/traced:0|1  allocate + free of 4 KiB through the
//                                   device allocator (the core's cache): a
//                                   traced pair also records the allocator's
//                                   history
//   SmallFill/traced:0|1            fillRandom of 256 floats and the stream's
//                                   synchronize: traced, the fill is timed on
//                                   its stream by two events
//   CurrentStreamTwoThreads/traced:0|1/threads:2
//                                   the current stream on two threads at once:
//                                   both write the one ring (CPU time is both
//                                   threads' per call)
//
// traced:1 runs with accel::trace::start({}) (no file); the ring wraps. Run
// with --benchmark_repetitions=5 --benchmark_report_aggregates_only=true and
// read the medians side by side (docs/performance.md).
#include <benchmark/benchmark.h>

#include "accel/accel.h"
#include "accel/openreg/openreg.h"
#include "accel/trace.h"
#include "thread_overlap.h"

namespace {

accel::DeviceType openregType() {
  static const accel::DeviceType type = [] {
    accel::openreg::registerBackend();
    accel::globalContext().lazyInitDevice(accel::openreg::deviceType());
    return accel::openreg::deviceType();
  }();
  return type;
}

// Tracing on for the benchmark's run when `traced`.
class TracedScope {
 public:
  explicit TracedScope(bool traced) : traced_(traced) {
    if (traced_) accel::trace::start({});
  }
  ~TracedScope() {
    if (traced_) accel::trace::stop();
  }
  TracedScope(const TracedScope&) = delete;
  TracedScope& operator=(const TracedScope&) = delete;

 private:
  bool traced_;
};

void BM_CurrentStream(benchmark::State& state) {
  const accel::DeviceType type = openregType();
  TracedScope scope(state.range(0) != 0);
  accel::AcceleratorHooks& hooks = accel::getHooks(type);
  for (auto _ : state) benchmark::DoNotOptimize(hooks.getCurrentStream(0));
}
BENCHMARK(BM_CurrentStream)->ArgName("traced")->Arg(0)->Arg(1);

void BM_DeviceAllocatorPair(benchmark::State& state) {
  const accel::DeviceType type = openregType();
  TracedScope scope(state.range(0) != 0);
  accel::Allocator& allocator = accel::getHooks(type).getDeviceAllocator(0);
  for (auto _ : state) {
    accel::DataPtr memory = allocator.allocate(4096);
    benchmark::DoNotOptimize(memory.get());
  }
}
BENCHMARK(BM_DeviceAllocatorPair)->ArgName("traced")->Arg(0)->Arg(1);

void BM_SmallFill(benchmark::State& state) {
  const accel::DeviceType type = openregType();
  accel::DataPtr memory = accel::getHooks(type).getDeviceAllocator(0).allocate(1024);
  TracedScope scope(state.range(0) != 0);
  accel::AcceleratorHooks& hooks = accel::getHooks(type);
  const accel::Stream stream = hooks.getCurrentStream(0);
  for (auto _ : state) {
    hooks.fillRandom(stream, accel::DeviceFill::UniformFloat, memory.get(), 256, 0.0,
                     1.0);
    hooks.synchronizeStream(stream);
  }
}
BENCHMARK(BM_SmallFill)->ArgName("traced")->Arg(0)->Arg(1)->UseRealTime();

// Thread 0 starts and stops the trace before its loop; each thread asks for
// the hooks in its loop (after the threads' common start), so that none
// keeps the backend's own from before the start. Reports the threads'
// `overlap` (thread_overlap.h).
void BM_CurrentStreamTwoThreads(benchmark::State& state) {
  const accel::DeviceType type = openregType();
  if (state.thread_index() == 0 && state.range(0) != 0) accel::trace::start({});
  accel::AcceleratorHooks* hooks = nullptr;
  const accel::bench::OverlapMeter overlap;
  for (auto _ : state) {
    if (hooks == nullptr) hooks = &accel::getHooks(type);
    benchmark::DoNotOptimize(hooks->getCurrentStream(0));
  }
  overlap.report(state);
  if (state.thread_index() == 0 && state.range(0) != 0) accel::trace::stop();
}
BENCHMARK(BM_CurrentStreamTwoThreads)->ArgName("traced")->Arg(0)->Arg(1)->Threads(2);

}  // namespace

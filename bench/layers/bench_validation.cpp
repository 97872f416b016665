// The validation layer's cost (docs/validation.md): a hook call (the current
// stream) and a device allocator pair (allocate + free of 256 B) on the
// in-memory test backend, with the layer off and on, in the same program.
// Off, the layer is absent from the path (getHooks returns the backend);
// on, each hook call runs the layer's checks (the current stream takes no
// lock: no rule reads it), and each allocation captures a C++ stack
// (on_no_stacks: ACCEL_VALIDATE_STACKS=0). The quarantine is
// off in the allocator pair with the layer on, so that each free goes back as it does
// with the layer off (a held free would make every allocation a new block); the held case
// is measured on its own, and the pair with 10000 blocks alive beside it
// (_10k_live). allocatorPair/empty_layer adds a layer that does nothing
// instead: the floor of any layer (the decorator's allocator and its block per
// allocation), below which validation cannot go.
#include <benchmark/benchmark.h>

#include <vector>

#include "accel/hooks_table.h"
#include "accel/validation.h"
#include "layers/hook_layer.h"
#include "support/test_backend.h"
#include "thread_overlap.h"

namespace {

accel::AcceleratorHooks& backend() {
  static accel::AcceleratorHooks& hooks =
      accel::testing::registerTestBackend("benchvalidatedev", 1);
  return hooks;
}

// Sets the layer's mode for one benchmark's run.
class Mode {
 public:
  explicit Mode(accel::ValidationMode mode) { accel::setValidationMode(mode); }
  ~Mode() { accel::setValidationMode(accel::ValidationMode::Off); }
};

void currentStream(benchmark::State& state, accel::ValidationMode mode) {
  const accel::DeviceType type = backend().deviceType();
  backend().init();
  Mode on(mode);
  for (auto _ : state) {
    benchmark::DoNotOptimize(accel::getHooks(type).getCurrentStream(0));
  }
}
BENCHMARK_CAPTURE(currentStream, off, accel::ValidationMode::Off);
BENCHMARK_CAPTURE(currentStream, on, accel::ValidationMode::Log);

void allocatorPair(benchmark::State& state, accel::ValidationMode mode,
                   std::size_t quarantine_blocks, bool stacks, int live_blocks = 0) {
  const accel::DeviceType type = backend().deviceType();
  backend().init();
  Mode on(mode);
  accel::setValidationQuarantine(quarantine_blocks, std::size_t{256} << 20);
  accel::setValidationStacks(stacks);
  accel::Allocator& allocator = accel::getHooks(type).getDeviceAllocator(0);
  // Blocks alive throughout, as a program's tensors are: the layer's books
  // hold them while the pair comes and goes.
  std::vector<accel::DataPtr> alive;
  for (int i = 0; i < live_blocks; ++i) alive.push_back(allocator.allocate(512));
  for (auto _ : state) {
    accel::DataPtr data = allocator.allocate(256);
    benchmark::DoNotOptimize(data.get());
  }
  accel::setValidationQuarantine(1024, std::size_t{256} << 20);
  accel::setValidationStacks(true);
}
BENCHMARK_CAPTURE(allocatorPair, off, accel::ValidationMode::Off, 0, true);
BENCHMARK_CAPTURE(allocatorPair, on, accel::ValidationMode::Log, 0, true);
BENCHMARK_CAPTURE(allocatorPair, on_no_stacks, accel::ValidationMode::Log, 0, false);
BENCHMARK_CAPTURE(allocatorPair, on_quarantine_1024, accel::ValidationMode::Log, 1024,
                  true);
BENCHMARK_CAPTURE(allocatorPair, off_10k_live, accel::ValidationMode::Off, 0, false,
                  10000);
BENCHMARK_CAPTURE(allocatorPair, on_no_stacks_10k_live, accel::ValidationMode::Log, 0,
                  false, 10000);
BENCHMARK_CAPTURE(allocatorPair, on_quarantine_1024_no_stacks, accel::ValidationMode::Log,
                  1024, false);

// Two threads making and freeing blocks at once on one device, without
// stacks, without the quarantine and with it: each thread's blocks go on
// its own lane of the validation layer's memory books, under a lock of its
// own (docs/validation.md, "Books per thread"); a lock two threads shared
// would be taken in turn. Threads that do not run at the same time do not
// contend: the benchmark reports their `overlap` (thread_overlap.h).
void allocatorPairTwoThreads(benchmark::State& state, accel::ValidationMode mode,
                             std::size_t quarantine_blocks = 0) {
  const accel::DeviceType type = backend().deviceType();
  if (state.thread_index() == 0) {
    backend().init();
    accel::setValidationMode(mode);
    accel::setValidationQuarantine(quarantine_blocks, std::size_t{256} << 20);
    accel::setValidationStacks(false);
  }
  // Each thread asks after the start, when thread 0 has set the mode.
  accel::Allocator* allocator = nullptr;
  const accel::bench::OverlapMeter overlap;
  for (auto _ : state) {
    if (allocator == nullptr) allocator = &accel::getHooks(type).getDeviceAllocator(0);
    accel::DataPtr data = allocator->allocate(256);
    benchmark::DoNotOptimize(data.get());
  }
  overlap.report(state);
  if (state.thread_index() == 0) {
    accel::setValidationMode(accel::ValidationMode::Off);
    accel::setValidationQuarantine(1024, std::size_t{256} << 20);
    accel::setValidationStacks(true);
  }
}
BENCHMARK_CAPTURE(allocatorPairTwoThreads, off, accel::ValidationMode::Off)->Threads(2);
BENCHMARK_CAPTURE(allocatorPairTwoThreads, on_no_stacks, accel::ValidationMode::Log)
    ->Threads(2);
BENCHMARK_CAPTURE(allocatorPairTwoThreads, on_quarantine_1024_no_stacks,
                  accel::ValidationMode::Log, 1024)
    ->Threads(2);

// A layer that checks and records nothing.
class EmptyLayer final : public accel::detail::HookLayer {
 public:
  void before(const accel::detail::HookCall&) override {}
  void after(const accel::detail::HookCall&, bool) noexcept override {}
  [[nodiscard]] bool wantsTimes() const noexcept override { return false; }
};

void allocatorPairEmptyLayer(benchmark::State& state) {
  const accel::DeviceType type = backend().deviceType();
  backend().init();
  EmptyLayer layer;
  accel::detail::addHookLayer(layer);
  accel::Allocator& allocator = accel::getHooks(type).getDeviceAllocator(0);
  for (auto _ : state) {
    accel::DataPtr data = allocator.allocate(256);
    benchmark::DoNotOptimize(data.get());
  }
  accel::detail::removeHookLayer(layer);
}
BENCHMARK(allocatorPairEmptyLayer)->Name("allocatorPair/empty_layer");

}  // namespace

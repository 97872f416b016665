// What the C plugin boundary costs on the hot paths: the same calls on
// openreg (an asynchronous C plugin whose current device and streams the
// core keeps), on a C plugin whose backend keeps its current device and stream behind the
// boundary (tests/abi's abitest: every such call crosses it), and on a C
// plugin with ACCEL_BACKEND_SYNCHRONOUS (examples/out_of_tree_backend on the
// C++ adapter: the core's kit keeps them, nothing crosses), in one run.
//
// Rows, per backend: getHooks(t).getCurrentDevice(), the current stream,
// getDefaultGenerator(0), and a 256-byte device allocate+free pair through
// getDeviceAllocator(0). docs/performance.md ("The C plugin boundary") has
// the figures.
#include <benchmark/benchmark.h>

#include <thread>

#include "accel/accel.h"
#include "accel/openreg/openreg.h"
#include "accel/plugin.h"

namespace {

const bool kThreaded = [] {
  std::thread([] {}).join();  // as bench_backend_pair: a process that had a thread
  return true;
}();

accel::DeviceType loaded(const char* path) {
  const accel::PluginRecord record = accel::loadBackend(path);
  const accel::DeviceType type = record.registered.at(0);
  accel::globalContext().lazyInitDevice(type);
  return type;
}

accel::DeviceType backend(int which) {
  static const accel::DeviceType types[] = {
      [] {
        accel::openreg::registerBackend();
        accel::globalContext().lazyInitDevice(accel::openreg::deviceType());
        return accel::openreg::deviceType();
      }(),
      loaded(ACCEL_BENCH_ABITEST_PLUGIN), loaded(ACCEL_BENCH_EXAMPLE_PLUGIN)};
  return types[which];
}

void label(benchmark::State& state) {
  static const char* const kNames[] = {"openreg (C, asynchronous: core keeps current)",
                                       "abitest (C, backend keeps current)",
                                       "example (C, synchronous: core keeps current)"};
  state.SetLabel(kNames[state.range(0)]);
}

void BM_CurrentDevice(benchmark::State& state) {
  const accel::DeviceType type = backend(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(accel::getHooks(type).getCurrentDevice());
  label(state);
}
BENCHMARK(BM_CurrentDevice)->DenseRange(0, 2);

void BM_CurrentStream(benchmark::State& state) {
  const accel::DeviceType type = backend(static_cast<int>(state.range(0)));
  for (auto _ : state)
    benchmark::DoNotOptimize(accel::getHooks(type).getCurrentStream(0));
  label(state);
}
BENCHMARK(BM_CurrentStream)->DenseRange(0, 2);

void BM_DefaultGenerator(benchmark::State& state) {
  const accel::DeviceType type = backend(static_cast<int>(state.range(0)));
  (void)accel::getHooks(type).getDefaultGenerator(0);
  for (auto _ : state)
    benchmark::DoNotOptimize(accel::getHooks(type).getDefaultGenerator(0));
  label(state);
}
BENCHMARK(BM_DefaultGenerator)->DenseRange(0, 2);

void BM_AllocatorPair256(benchmark::State& state) {
  const accel::DeviceType type = backend(static_cast<int>(state.range(0)));
  accel::Allocator* allocator = &accel::getHooks(type).getDeviceAllocator(0);
  benchmark::DoNotOptimize(allocator);
  allocator->allocate(256).reset();  // warm: the segment is cached
  for (auto _ : state) {
    accel::DataPtr p = allocator->allocate(256);
    benchmark::DoNotOptimize(p.get());
  }
  label(state);
}
BENCHMARK(BM_AllocatorPair256)->DenseRange(0, 2);

}  // namespace

// Handle pool reserve: the fast path (one device, alternating over 8, two
// threads) and the first reserve in a new thread, for DeviceThreadHandlePool
// and for the BASELINE (the classic mutex + unordered_map pool with
// thread_local windows holding an unordered_map, baseline_handle_pool.h).
//
// Budget (DESIGN.md): fast path <= 2 ns and >= 3x faster than the baseline;
// first reserve in a new thread <= 0.5 us. The first-reserve benchmarks time
// the reserve inside the new thread (manual time, so thread creation is not
// in it); the SpawnJoin ones time the whole thread for reference, so thread
// creation can be subtracted.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <thread>

#include "accel/handle_pool.h"
#include "handle_pool/baseline_handle_pool.h"
#include "handle_pool/fake_handle_pool.h"

namespace accel {
namespace {

using testing::FakeHandle;

struct BenchTag;
using Pool = testing::FakeHandlePool<BenchTag>;

FakeHandle* createBaselineHandle(int device) {
  return new FakeHandle{static_cast<DeviceIndex>(device), 0};
}
void destroyBaselineHandle(FakeHandle* handle) { delete handle; }
using BaselinePool =
    bench::BaselineHandlePool<FakeHandle*, createBaselineHandle, destroyBaselineHandle>;

// The classic call site: a static pool and a thread_local window, repeated
// wherever a handle is needed.
[[gnu::noinline]] FakeHandle* baselineReserve(int device) {
  static const auto pool = std::make_shared<BaselinePool>();
  thread_local const std::unique_ptr<BaselinePool::Window> window = pool->newWindow();
  return window->reserve(device);
}

using Clock = std::chrono::steady_clock;

void BM_Reserve_OneDevice(benchmark::State& state) {
  (void)reserveHandle<Pool>(0);
  for (auto _ : state) benchmark::DoNotOptimize(reserveHandle<Pool>(0));
}
BENCHMARK(BM_Reserve_OneDevice);

void BM_Baseline_Reserve_OneDevice(benchmark::State& state) {
  (void)baselineReserve(0);
  for (auto _ : state) benchmark::DoNotOptimize(baselineReserve(0));
}
BENCHMARK(BM_Baseline_Reserve_OneDevice);

void BM_Reserve_Alternating8Devices(benchmark::State& state) {
  for (int device = 0; device < 8; ++device) (void)reserveHandle<Pool>(device);
  unsigned i = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(reserveHandle<Pool>(static_cast<int>(i++ & 7)));
}
BENCHMARK(BM_Reserve_Alternating8Devices);

void BM_Baseline_Reserve_Alternating8Devices(benchmark::State& state) {
  for (int device = 0; device < 8; ++device) (void)baselineReserve(device);
  unsigned i = 0;
  for (auto _ : state)
    benchmark::DoNotOptimize(baselineReserve(static_cast<int>(i++ & 7)));
}
BENCHMARK(BM_Baseline_Reserve_Alternating8Devices);

// Two threads, each on its own handle of the same pool and device.
void BM_Reserve_TwoThreads(benchmark::State& state) {
  (void)reserveHandle<Pool>(1);
  for (auto _ : state) benchmark::DoNotOptimize(reserveHandle<Pool>(1));
}
BENCHMARK(BM_Reserve_TwoThreads)->Threads(2);

void BM_Baseline_Reserve_TwoThreads(benchmark::State& state) {
  (void)baselineReserve(1);
  for (auto _ : state) benchmark::DoNotOptimize(baselineReserve(1));
}
BENCHMARK(BM_Baseline_Reserve_TwoThreads)->Threads(2);

// Times the first reserve inside a new thread. A fixed iteration count: with
// manual time, the library would otherwise spawn threads until the timed
// parts alone add up to its minimum time (millions of threads). The pool already holds an
// idle handle (returned by the previous thread), as in a steady state: create() itself is
// the library's cost, not the pool's.
template <typename ReserveFn>
void firstReserveInNewThread(benchmark::State& state, ReserveFn reserve) {
  std::thread([&] { (void)reserve(2); }).join();  // one idle handle for device 2
  for (auto _ : state) {
    double seconds = 0;
    std::thread([&] {
      const auto start = Clock::now();
      benchmark::DoNotOptimize(reserve(2));
      seconds = std::chrono::duration<double>(Clock::now() - start).count();
    }).join();
    state.SetIterationTime(seconds);
  }
}

void BM_Reserve_FirstInNewThread(benchmark::State& state) {
  firstReserveInNewThread(state, [](int device) { return reserveHandle<Pool>(device); });
}
BENCHMARK(BM_Reserve_FirstInNewThread)->UseManualTime()->Iterations(20000);

void BM_Baseline_Reserve_FirstInNewThread(benchmark::State& state) {
  firstReserveInNewThread(state, baselineReserve);
}
BENCHMARK(BM_Baseline_Reserve_FirstInNewThread)->UseManualTime()->Iterations(20000);

// What the timed region costs with nothing in it (two clock reads).
void BM_ClockReadPair(benchmark::State& state) {
  for (auto _ : state) {
    const auto start = Clock::now();
    benchmark::DoNotOptimize(start);
    benchmark::DoNotOptimize(Clock::now() - start);
  }
}
BENCHMARK(BM_ClockReadPair);

// Whole threads, for reference: spawn + join alone, and with one reserve
// (which includes handing the handle back at thread exit).
void BM_ThreadSpawnJoin(benchmark::State& state) {
  for (auto _ : state) std::thread([] {}).join();
}
BENCHMARK(BM_ThreadSpawnJoin);

void BM_ThreadSpawnJoin_WithReserve(benchmark::State& state) {
  for (auto _ : state) {
    std::thread([] { benchmark::DoNotOptimize(reserveHandle<Pool>(3)); }).join();
  }
}
BENCHMARK(BM_ThreadSpawnJoin_WithReserve);

void BM_Baseline_ThreadSpawnJoin_WithReserve(benchmark::State& state) {
  for (auto _ : state) {
    std::thread([] { benchmark::DoNotOptimize(baselineReserve(3)); }).join();
  }
}
BENCHMARK(BM_Baseline_ThreadSpawnJoin_WithReserve);

}  // namespace
}  // namespace accel

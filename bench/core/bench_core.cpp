// Core fast paths, each next to the baseline it is judged against.
//
// Budgets (DESIGN.md, single thread, release build, medians):
//   getHooks(type)                              <= 1 ns
//   getCurrentDevice() through the hooks        <= 3 ns
//   registry lookup by name                     <= 10 ns
// Baseline: a plain thread_local read (inline, and behind a call, which is
// what a backend's getCurrentDevice costs at the least).
//
// The backend is the in-memory TestHooks (tests/support), whose
// getCurrentDevice is a thread-local read plus one relaxed load for its
// failure-injection knobs: close to what a real backend does.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <string_view>

#include "accel/device_guard.h"
#include "accel/hooks_table.h"
#include "accel/registry.h"
#include "support/test_backend.h"

namespace accel {
namespace {

DeviceType benchType() {
  static const DeviceType type = testing::registerTestBackend("benchdev", 2).deviceType();
  return type;
}

// ---- baselines ----

thread_local int t_value = 0;

[[gnu::noinline]] int readThreadLocalBehindACall() { return t_value; }

void BM_Baseline_ThreadLocalRead(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(t_value);
}
BENCHMARK(BM_Baseline_ThreadLocalRead);

void BM_Baseline_ThreadLocalReadBehindACall(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(readThreadLocalBehindACall());
}
BENCHMARK(BM_Baseline_ThreadLocalReadBehindACall);

// ---- hooks table ----

void BM_GetHooks(benchmark::State& state) {
  DeviceType type = benchType();
  benchmark::DoNotOptimize(type);
  for (auto _ : state) benchmark::DoNotOptimize(&getHooks(type));
}
BENCHMARK(BM_GetHooks);

// A type nobody registered: the slow path that ends at the absent hooks.
void BM_GetHooks_Absent(benchmark::State& state) {
  DeviceType type = registerDeviceType("bench_absent");
  benchmark::DoNotOptimize(type);
  for (auto _ : state) benchmark::DoNotOptimize(&getHooks(type));
}
BENCHMARK(BM_GetHooks_Absent);

// ---- current device ----

// The whole path a framework takes: table lookup, then the hook.
void BM_GetCurrentDevice(benchmark::State& state) {
  DeviceType type = benchType();
  benchmark::DoNotOptimize(type);
  for (auto _ : state) benchmark::DoNotOptimize(getHooks(type).getCurrentDevice());
}
BENCHMARK(BM_GetCurrentDevice);

// With the hooks reference already in hand (what DeviceGuard does).
void BM_GetCurrentDevice_CachedHooks(benchmark::State& state) {
  AcceleratorHooks* hooks = &getHooks(benchType());
  benchmark::DoNotOptimize(hooks);
  for (auto _ : state) benchmark::DoNotOptimize(hooks->getCurrentDevice());
}
BENCHMARK(BM_GetCurrentDevice_CachedHooks);

// ---- guards ----

// A guard for device `index` while device 0 is current: index 0 keeps the
// device, index 1 switches to it and back.
void BM_DeviceGuard(benchmark::State& state, DeviceIndex index) {
  getHooks(benchType()).setCurrentDevice(0);
  const Device device(benchType(), index);
  for (auto _ : state) {
    DeviceGuard guard(device);
    benchmark::DoNotOptimize(&guard);
  }
}
BENCHMARK_CAPTURE(BM_DeviceGuard, SameDevice, DeviceIndex{0});
BENCHMARK_CAPTURE(BM_DeviceGuard, Switching, DeviceIndex{1});

// ---- registry ----

struct Widget {};
using WidgetRegistry = Registry<std::string, Widget>;

// Eight keys, like a registry of the built-in device types plus one.
WidgetRegistry& eightKeyRegistry() {
  static WidgetRegistry* registry = [] {
    auto* r = new WidgetRegistry("bench widget");
    for (const char* key :
         {"cpu", "cuda", "hip", "mps", "xpu", "mtia", "hpu", "openreg"}) {
      r->registerCreator(key, [] { return std::make_unique<Widget>(); });
    }
    return r;
  }();
  return *registry;
}

// `lookup(registry, key)` over and over.
template <typename Lookup>
void BM_Registry(benchmark::State& state, std::string_view key, Lookup lookup) {
  WidgetRegistry& registry = eightKeyRegistry();
  for (auto _ : state) {
    benchmark::DoNotOptimize(key);
    benchmark::DoNotOptimize(lookup(registry, key));
  }
}
constexpr auto kHas = [](WidgetRegistry& r, std::string_view key) { return r.has(key); };
// For comparison with factory registries: lookup, std::function call and a
// heap allocation.
constexpr auto kCreate = [](WidgetRegistry& r, std::string_view key) {
  return r.create(key);
};
BENCHMARK_CAPTURE(BM_Registry, Has_Hit, std::string_view("openreg"), kHas);
BENCHMARK_CAPTURE(BM_Registry, Has_Miss, std::string_view("nosuch"), kHas);
BENCHMARK_CAPTURE(BM_Registry, Create, std::string_view("openreg"), kCreate);

}  // namespace
}  // namespace accel

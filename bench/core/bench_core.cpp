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

void BM_DeviceGuard_SameDevice(benchmark::State& state) {
  getHooks(benchType()).setCurrentDevice(0);
  const Device device(benchType(), 0);
  for (auto _ : state) {
    DeviceGuard guard(device);
    benchmark::DoNotOptimize(&guard);
  }
}
BENCHMARK(BM_DeviceGuard_SameDevice);

void BM_DeviceGuard_Switching(benchmark::State& state) {
  getHooks(benchType()).setCurrentDevice(0);
  const Device device(benchType(), 1);
  for (auto _ : state) {
    DeviceGuard guard(device);
    benchmark::DoNotOptimize(&guard);
  }
}
BENCHMARK(BM_DeviceGuard_Switching);

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

void BM_RegistryHas_Hit(benchmark::State& state) {
  WidgetRegistry& registry = eightKeyRegistry();
  std::string_view key = "openreg";
  for (auto _ : state) {
    benchmark::DoNotOptimize(key);
    benchmark::DoNotOptimize(registry.has(key));
  }
}
BENCHMARK(BM_RegistryHas_Hit);

void BM_RegistryHas_Miss(benchmark::State& state) {
  WidgetRegistry& registry = eightKeyRegistry();
  std::string_view key = "nosuch";
  for (auto _ : state) {
    benchmark::DoNotOptimize(key);
    benchmark::DoNotOptimize(registry.has(key));
  }
}
BENCHMARK(BM_RegistryHas_Miss);

// For comparison with factory registries: lookup, std::function call and a
// heap allocation.
void BM_RegistryCreate(benchmark::State& state) {
  WidgetRegistry& registry = eightKeyRegistry();
  std::string_view key = "openreg";
  for (auto _ : state) {
    benchmark::DoNotOptimize(key);
    benchmark::DoNotOptimize(registry.create(key));
  }
}
BENCHMARK(BM_RegistryCreate);

}  // namespace
}  // namespace accel

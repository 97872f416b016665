// Our hot paths beside PyTorch's equivalents, in one process (PyTorch 1.13 as
// Debian's libtorch-dev ships it). Each pair is named BM_<Path>/accel and
// BM_<Path>/pytorch; read the ratio of their medians from one run, not the
// nanoseconds (docs/performance.md, "Side by side with PyTorch").
//
//   HooksAccessor      getHooks(openreg)            at::detail::getCUDAHooks()
//   HooksVirtualCall   getHooks(t).getCurrentDevice()  getCUDAHooks().hasCUDA()
//                      (accessor + one virtual call: PyTorch built without CUDA
//                      has no current device to ask for)
//   HandleReserve      reserveHandle<Pool>(0)       DeviceThreadHandlePool's
//                                                   thread_local PoolWindow::reserve(0)
//   ThreadLifeOneReserve  spawn, first reserve, exit (the handle goes back), join
//   RegistryHas        Registry::has(name)          c10::Registry::Has(name)
//   RegistryCreate     Registry::create(name)       c10::Registry::Create(name)
//                      (the same eight keys: one hit, a miss, every key in turn)
//   DefaultGenerator   globalContext().defaultGenerator(openreg:0)
//                      at::globalContext().defaultGenerator(cpu)
//   DefaultGeneratorCopy  the same, the handle copied (and destroyed)
//   UniformFill64MiB   fillUniform(float, 64 MiB, one thread, our generator)
//                      at::Tensor::uniform_ (float, 64 MiB, one intra-op thread,
//                      the default CPU generator)
//
// PyTorch's pool is its real header-only DeviceThreadHandlePool
// (ATen/cuda/detail/DeviceThreadHandles.h), used as ATen's cuBLAS call site
// uses it: a static shared pool and a thread_local window. Both pools hand
// out the same fake handles (a heap object per handle).
#include <benchmark/benchmark.h>

// PyTorch 1.13 (Debian libtorch-dev).
#include <ATen/ATen.h>
#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/cuda/detail/DeviceThreadHandles.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <c10/util/Registry.h>

#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "accel/context.h"
#include "accel/handle_pool.h"
#include "accel/hooks_table.h"
#include "accel/openreg/backend.h"
#include "accel/philox_generator.h"
#include "accel/random_fill.h"
#include "accel/registry.h"

namespace {

// ---- setup shared by both sides ----

accel::DeviceType openregType() {
  static const accel::DeviceType type = [] {
    accel::openreg::registerBackend();
    accel::globalContext().lazyInitDevice(accel::openreg::deviceType());
    return accel::openreg::deviceType();
  }();
  return type;
}

struct FakeHandle {
  int device;
};

// Ours: a traits type describes the pool.
struct AccelFakePool {
  using Handle = FakeHandle*;
  static constexpr accel::DeviceType kDeviceType = accel::DeviceType::CPU;
  static constexpr bool kSwitchDevice = false;
  static constexpr const char* kName = "peer-bench";
  static Handle create(accel::DeviceIndex device) { return new FakeHandle{device}; }
  static void destroy(Handle handle) noexcept { delete handle; }
};

// PyTorch's: create/destroy as template arguments.
void createTorchHandle(FakeHandle** handle) { *handle = new FakeHandle{0}; }
void destroyTorchHandle(FakeHandle* handle) { delete handle; }
using TorchPool =
    at::cuda::DeviceThreadHandlePool<FakeHandle*, createTorchHandle, destroyTorchHandle>;

// ATen's call site (cuBLAS handles): a static pool, a thread_local window.
[[gnu::noinline]] FakeHandle* torchReserve(int device) {
  static const auto pool = std::make_shared<TorchPool>();
  thread_local const std::unique_ptr<TorchPool::PoolWindow> window(pool->newPoolWindow());
  return window->reserve(device);
}

[[gnu::noinline]] FakeHandle* accelReserve(int device) {
  return accel::reserveHandle<AccelFakePool>(static_cast<accel::DeviceIndex>(device));
}

struct Widget {};
// Eight keys, like a registry of the built-in device types plus one.
constexpr const char* kKeys[] = {"cpu", "cuda", "hip", "mps",
                                 "xpu", "mtia", "hpu", "openreg"};

accel::Registry<std::string, Widget>& accelRegistry() {
  static auto* registry = [] {
    auto* r = new accel::Registry<std::string, Widget>("peer bench widget");
    for (const char* key : kKeys)
      r->registerCreator(key, [] { return std::make_unique<Widget>(); });
    return r;
  }();
  return *registry;
}

using TorchRegistry = c10::Registry<std::string, std::unique_ptr<Widget>>;
TorchRegistry& torchRegistry() {
  static auto* registry = [] {
    auto* r = new TorchRegistry(/*warning=*/false);
    for (const char* key : kKeys)
      r->Register(key, [] { return std::make_unique<Widget>(); });
    return r;
  }();
  return *registry;
}

// ---- hooks ----

void BM_HooksAccessor_accel(benchmark::State& state) {
  const accel::DeviceType type = openregType();
  for (auto _ : state) benchmark::DoNotOptimize(&accel::getHooks(type));
}
BENCHMARK(BM_HooksAccessor_accel);

void BM_HooksAccessor_pytorch(benchmark::State& state) {
  (void)at::detail::getCUDAHooks();
  for (auto _ : state) benchmark::DoNotOptimize(&at::detail::getCUDAHooks());
}
BENCHMARK(BM_HooksAccessor_pytorch);

void BM_HooksVirtualCall_accel(benchmark::State& state) {
  const accel::DeviceType type = openregType();
  for (auto _ : state) benchmark::DoNotOptimize(accel::getHooks(type).getCurrentDevice());
}
BENCHMARK(BM_HooksVirtualCall_accel);

void BM_HooksVirtualCall_pytorch(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(at::detail::getCUDAHooks().hasCUDA());
}
BENCHMARK(BM_HooksVirtualCall_pytorch);

// ---- handle pools ----

void BM_HandleReserve_accel(benchmark::State& state) {
  (void)accelReserve(0);
  for (auto _ : state) benchmark::DoNotOptimize(accelReserve(0));
}
BENCHMARK(BM_HandleReserve_accel);

void BM_HandleReserve_pytorch(benchmark::State& state) {
  (void)torchReserve(0);
  for (auto _ : state) benchmark::DoNotOptimize(torchReserve(0));
}
BENCHMARK(BM_HandleReserve_pytorch);

// A whole short-lived worker: spawn, first reserve (an idle handle is waiting
// in the pool, as in a steady state), exit (the handle goes back), join.
template <typename Reserve>
void threadLifeOneReserve(benchmark::State& state, Reserve reserve) {
  std::thread([&] { (void)reserve(1); }).join();
  for (auto _ : state) {
    std::thread([&] { benchmark::DoNotOptimize(reserve(1)); }).join();
  }
}
void BM_ThreadLifeOneReserve_accel(benchmark::State& state) {
  threadLifeOneReserve(state, accelReserve);
}
BENCHMARK(BM_ThreadLifeOneReserve_accel);
void BM_ThreadLifeOneReserve_pytorch(benchmark::State& state) {
  threadLifeOneReserve(state, torchReserve);
}
BENCHMARK(BM_ThreadLifeOneReserve_pytorch);

// ---- registries, the same keys on both sides ----

// One lookup per iteration; the key is opaque to the optimiser each time.
// c10::Registry takes const std::string&: its key is built once, outside.
template <typename Key, typename Lookup>
void repeatLookup(benchmark::State& state, const Key& key, Lookup lookup) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(key);
    benchmark::DoNotOptimize(lookup(key));
  }
}
auto accelHas = [](std::string_view key) { return accelRegistry().has(key); };
auto accelCreate = [](std::string_view key) { return accelRegistry().create(key); };
auto torchHas = [](const std::string& key) { return torchRegistry().Has(key); };
auto torchCreate = [](const std::string& key) { return torchRegistry().Create(key); };

void BM_RegistryHas_Hit_accel(benchmark::State& state) {
  repeatLookup(state, std::string_view("openreg"), accelHas);
}
void BM_RegistryHas_Hit_pytorch(benchmark::State& state) {
  repeatLookup(state, std::string("openreg"), torchHas);
}
void BM_RegistryHas_Miss_accel(benchmark::State& state) {
  repeatLookup(state, std::string_view("nosuch"), accelHas);
}
void BM_RegistryHas_Miss_pytorch(benchmark::State& state) {
  repeatLookup(state, std::string("nosuch"), torchHas);
}
void BM_RegistryCreate_accel(benchmark::State& state) {
  repeatLookup(state, std::string_view("openreg"), accelCreate);
}
void BM_RegistryCreate_pytorch(benchmark::State& state) {
  repeatLookup(state, std::string("openreg"), torchCreate);
}
BENCHMARK(BM_RegistryHas_Hit_accel);
BENCHMARK(BM_RegistryHas_Hit_pytorch);
BENCHMARK(BM_RegistryHas_Miss_accel);
BENCHMARK(BM_RegistryHas_Miss_pytorch);
BENCHMARK(BM_RegistryCreate_accel);
BENCHMARK(BM_RegistryCreate_pytorch);

// Every key in turn. libstdc++'s unordered_map scans its node list without
// hashing while it holds at most 20 elements, so c10's cost depends on where
// a key sits in that list ("openreg", registered last, is first); cycling
// over all eight keys gives the average.
template <typename Key, typename Lookup>
void lookupEveryKey(benchmark::State& state, Lookup lookup) {
  static_assert(std::size(kKeys) == 8, "the loop below steps through eight keys");
  std::vector<Key> keys(std::begin(kKeys), std::end(kKeys));
  std::size_t i = 0;
  for (auto _ : state) {
    const Key& key = keys[i++ & 7];
    benchmark::DoNotOptimize(key);
    benchmark::DoNotOptimize(lookup(key));
  }
}
void BM_RegistryHas_EveryKey_accel(benchmark::State& state) {
  lookupEveryKey<std::string_view>(state, accelHas);
}
void BM_RegistryHas_EveryKey_pytorch(benchmark::State& state) {
  lookupEveryKey<std::string>(state, torchHas);
}
BENCHMARK(BM_RegistryHas_EveryKey_accel);
BENCHMARK(BM_RegistryHas_EveryKey_pytorch);

// ---- default generators ----

void BM_DefaultGenerator_accel(benchmark::State& state) {
  const accel::Device device(openregType(), 0);
  auto& context = accel::globalContext();
  (void)context.defaultGenerator(device);
  for (auto _ : state) benchmark::DoNotOptimize(context.defaultGenerator(device));
}
BENCHMARK(BM_DefaultGenerator_accel);

void BM_DefaultGenerator_pytorch(benchmark::State& state) {
  const at::Device device(at::kCPU);
  auto& context = at::globalContext();
  (void)context.defaultGenerator(device);
  for (auto _ : state) benchmark::DoNotOptimize(context.defaultGenerator(device));
}
BENCHMARK(BM_DefaultGenerator_pytorch);

// A copy of the default generator's handle, as a caller that keeps one does:
// ours is immortal (not reference counted), PyTorch's an
// intrusive_ptr copy (an atomic increment and decrement).
void BM_DefaultGeneratorCopy_accel(benchmark::State& state) {
  const accel::Device device(openregType(), 0);
  auto& context = accel::globalContext();
  (void)context.defaultGenerator(device);
  for (auto _ : state) {
    accel::Generator copy = context.defaultGenerator(device);
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(BM_DefaultGeneratorCopy_accel);

void BM_DefaultGeneratorCopy_pytorch(benchmark::State& state) {
  const at::Device device(at::kCPU);
  auto& context = at::globalContext();
  (void)context.defaultGenerator(device);
  for (auto _ : state) {
    at::Generator copy = context.defaultGenerator(device);
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(BM_DefaultGeneratorCopy_pytorch);

// The copy before default generators were immortal: a reference-counted
// (std::shared_ptr) handle, as getNewGenerator's still are.
void BM_CountedGeneratorCopy_accel(benchmark::State& state) {
  const accel::Generator counted =
      accel::makePhiloxGenerator(accel::Device(openregType(), 0));
  for (auto _ : state) {
    accel::Generator copy = counted;
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(BM_CountedGeneratorCopy_accel);

// ---- 64 MiB uniform float fill, one thread ----

constexpr std::int64_t kFillBytes = std::int64_t{64} << 20;
constexpr std::int64_t kFillFloats =
    kFillBytes / static_cast<std::int64_t>(sizeof(float));

void uniformFill(benchmark::State& state, accel::FillPath path) {
  if (!accel::isFillPathSupported(path)) {
    state.SkipWithError("fill path not supported on this CPU");
    return;
  }
  std::vector<float> out(static_cast<std::size_t>(kFillFloats));
  const accel::Generator generator =
      accel::makePhiloxGenerator(accel::Device(accel::DeviceType::CPU, 0), 42);
  accel::fillUniform(out, generator, {path, 1});  // touch the pages
  for (auto _ : state) {
    accel::fillUniform(out, generator, {path, 1});
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kFillBytes);
}

// The widest path this CPU has (AVX-512 where present).
void BM_UniformFill64MiB_accel(benchmark::State& state) {
  uniformFill(state, accel::FillPath::Auto);
}
BENCHMARK(BM_UniformFill64MiB_accel)->Unit(benchmark::kMillisecond)->UseRealTime();

// As on a CPU without AVX-512.
void BM_UniformFill64MiB_accel_avx2(benchmark::State& state) {
  uniformFill(state, accel::FillPath::Avx2);
}
BENCHMARK(BM_UniformFill64MiB_accel_avx2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_UniformFill64MiB_pytorch(benchmark::State& state) {
  at::set_num_threads(1);
  at::Tensor out = at::empty({kFillFloats}, at::kFloat);
  out.uniform_(0, 1);  // touch the pages
  for (auto _ : state) {
    out.uniform_(0, 1);
    benchmark::DoNotOptimize(out.data_ptr());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kFillBytes);
}
BENCHMARK(BM_UniformFill64MiB_pytorch)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

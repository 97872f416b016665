// Several threads allocating and freeing on one device, and on two, under
// each design of the allocator's concurrency, in one run (docs/performance.md,
// "Memory under threads"; docs/design-notes.md):
//   thread_caches  the default: per-thread caches of freed blocks, the biased
//                  device lock behind them;
//   biased_lock    thread_caches:false: every call takes the device lock,
//                  biased while one thread takes it alone;
//   mutex          thread_caches:false,biased_lock:false: a plain mutex around
//                  the allocator (PyTorch's caching allocator's design).
// Arguments: design, bytes, threads, devices (thread t uses device t % devices,
// all on stream 0).
//
// Threads that do not run at the same time do not contend, so every run
// reports how much they overlapped: `concurrency` is the threads' CPU time
// over the run's wall time (2.0: two threads ran throughout) and `overlap`
// that over the thread count. `pairs_per_s` is the aggregate throughput
// (pairs over wall time); `cpu_ns_per_pair` the CPU the pairs cost. A figure
// from a run whose overlap is far below 1 says nothing about contention.
#include <benchmark/benchmark.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "accel/memory/caching_allocator.h"
#include "thread_overlap.h"

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

constexpr const char* kDesigns[] = {"", "thread_caches:false",
                                    "thread_caches:false,biased_lock:false"};
constexpr const char* kDesignNames[] = {"thread_caches", "biased_lock", "mutex"};
constexpr int kPairsPerThread = 1 << 20;

using accel::bench::threadCpuNs;

void BM_Threads_AllocFree(benchmark::State& state) {
  const char* settings = kDesigns[state.range(0)];
  const auto bytes = static_cast<std::size_t>(state.range(1));
  const auto threads = static_cast<int>(state.range(2));
  const auto devices = static_cast<int>(state.range(3));
  MappedPagesSource source;
  CachingAllocator allocator(DeviceType::CUDA, devices, source,
                             parseAllocatorSettings(settings));
  double pairs = 0, wall_ns = 0, cpu_ns = 0;
  for (auto _ : state) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<double> cpu(static_cast<std::size_t>(threads), 0.0);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const Stream stream(Device::unchecked(DeviceType::CUDA, t % devices), 0);
        allocator.allocate(t % devices, bytes, stream).reset();  // warm
        ready.fetch_add(1);
        while (!go.load(std::memory_order_acquire)) {
        }
        const double start = threadCpuNs();
        for (int i = 0; i < kPairsPerThread; ++i) {
          DataPtr p = allocator.allocate(t % devices, bytes, stream);
          benchmark::DoNotOptimize(p.get());
        }
        cpu[static_cast<std::size_t>(t)] = threadCpuNs() - start;
      });
    }
    while (ready.load() != threads) std::this_thread::yield();
    const auto begin = std::chrono::steady_clock::now();
    go.store(true, std::memory_order_release);
    for (std::thread& worker : workers) worker.join();
    const double wall =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - begin)
            .count();
    state.SetIterationTime(wall / 1e9);
    wall_ns += wall;
    for (double c : cpu) cpu_ns += c;
    pairs += static_cast<double>(threads) * kPairsPerThread;
  }
  state.counters["pairs_per_s"] = pairs / (wall_ns / 1e9);
  state.counters["cpu_ns_per_pair"] = cpu_ns / pairs;
  state.counters["concurrency"] = cpu_ns / wall_ns;
  state.counters["overlap"] = cpu_ns / wall_ns / threads;
  state.SetLabel(kDesignNames[state.range(0)]);
}

void designs(benchmark::internal::Benchmark* bench) {
  for (int design = 0; design < 3; ++design) {
    for (int bytes : {256, 64 << 10}) {
      bench->Args({design, bytes, 1, 1});
      bench->Args({design, bytes, 2, 1});
    }
    bench->Args({design, 256, 4, 2});
  }
}
BENCHMARK(BM_Threads_AllocFree)
    ->Apply(designs)
    ->UseManualTime()
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace accel::memory

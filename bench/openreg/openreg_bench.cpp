// openreg: the cost of the simulated device's basic operations.
//
//   KernelLaunchLatency     launchKernel() until the body starts on the worker;
//                           cold:0 right after the previous kernel (the worker
//                           still polls), cold:1 with the worker asleep
//   WorkerWakeupBaseline    handing a task to a sleeping thread with a bare
//                           mutex + condition variable (the floor for cold:1)
//   StreamSynchronize       an empty kernel plus synchronizeStream, round trip
//   SynchronizeIdleStream   synchronizeStream with nothing pending
//   EventRecordQuery        recordEvent + queryEvent
//   CopyHostToDevice / CopyDeviceToHost   synchronous copies (pinned host memory)
//   MemcpyBaseline          std::memcpy of the same sizes
//   DefaultGeneratorViaContext   globalContext().defaultGenerator(openreg:0) on
//                                an initialised backend (PyTorch's peer:
//                                ~6.7 ns on this kind of machine)
//   DefaultGeneratorViaHooks     getHooks(openreg).getDefaultGenerator(0)
//   GeneratorCopyBaseline        copying a Generator handle (its refcount):
//                                the floor for anything that returns one
//   CurrentDeviceViaHooks        getHooks(openreg).getCurrentDevice()
//
// Copies are timed in wall-clock time (the calling thread mostly waits).
// Run with --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
// and read the medians (docs/performance.md).
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "accel/accel.h"
#include "accel/openreg/openreg.h"

namespace {

using Clock = std::chrono::steady_clock;

accel::AcceleratorHooks& hooks() {
  static accel::AcceleratorHooks& h = []() -> accel::AcceleratorHooks& {
    accel::AcceleratorHooks& registered = accel::openreg::registerBackend();
    accel::globalContext().lazyInitDevice(accel::openreg::deviceType());
    return registered;
  }();
  return h;
}

// Long enough for a worker to stop polling and go to sleep.
constexpr std::chrono::microseconds kLetWorkerSleep{200};

// Waits until the work handed off at `enqueued` stores its start time
// (steady-clock ticks) in `started`, and returns the seconds between the two.
double secondsUntilStarted(const std::atomic<std::int64_t>& started,
                           Clock::time_point enqueued) {
  std::int64_t start = 0;
  // Yield while waiting: on a machine with few cores a busy caller could
  // keep the worker from the very core it needs.
  while ((start = started.load(std::memory_order_acquire)) == 0) {
    std::this_thread::yield();
  }
  return std::chrono::duration<double>(Clock::duration(start) -
                                       enqueued.time_since_epoch())
      .count();
}

void KernelLaunchLatency(benchmark::State& state) {
  const bool cold = state.range(0) != 0;
  const accel::Stream stream = hooks().getNewStream(0);
  std::atomic<std::int64_t> started{0};
  for (auto _ : state) {
    if (cold) std::this_thread::sleep_for(kLetWorkerSleep);  // not timed: manual time
    started.store(0, std::memory_order_relaxed);
    const Clock::time_point enqueued = Clock::now();
    accel::openreg::launchKernel(stream, "empty", {},
                                 [&started](const accel::openreg::KernelContext&) {
                                   started.store(Clock::now().time_since_epoch().count(),
                                                 std::memory_order_release);
                                 });
    state.SetIterationTime(secondsUntilStarted(started, enqueued));
    hooks().synchronizeStream(stream);
  }
}
BENCHMARK(KernelLaunchLatency)->ArgName("cold")->Arg(0)->Arg(1)->UseManualTime();

// The floor for a cold launch: handing a task to a sleeping thread through a
// mutex and condition variable, measured from the hand-off to the thread
// running.
void WorkerWakeupBaseline(benchmark::State& state) {
  std::mutex mutex;
  std::condition_variable cv;
  bool pending = false;
  bool stop = false;
  std::atomic<std::int64_t> started{0};
  std::thread worker([&] {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      cv.wait(lock, [&] { return pending || stop; });
      if (stop) return;
      pending = false;
      started.store(Clock::now().time_since_epoch().count(), std::memory_order_release);
    }
  });
  for (auto _ : state) {
    std::this_thread::sleep_for(kLetWorkerSleep);  // not timed: manual time
    started.store(0, std::memory_order_relaxed);
    const Clock::time_point enqueued = Clock::now();
    {
      std::lock_guard<std::mutex> lock(mutex);
      pending = true;
    }
    cv.notify_one();
    state.SetIterationTime(secondsUntilStarted(started, enqueued));
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    stop = true;
  }
  cv.notify_one();
  worker.join();
}
BENCHMARK(WorkerWakeupBaseline)->UseManualTime();

void StreamSynchronize(benchmark::State& state) {
  const accel::Stream stream = hooks().getNewStream(0);
  for (auto _ : state) {
    accel::openreg::launchKernel(stream, "empty", {},
                                 [](const accel::openreg::KernelContext&) {});
    hooks().synchronizeStream(stream);
  }
}
BENCHMARK(StreamSynchronize);

void SynchronizeIdleStream(benchmark::State& state) {
  const accel::Stream stream = hooks().getNewStream(0);
  for (auto _ : state) hooks().synchronizeStream(stream);
}
BENCHMARK(SynchronizeIdleStream);

void EventRecordQuery(benchmark::State& state) {
  const accel::Stream stream = hooks().getNewStream(0);
  const accel::EventId event = hooks().createEvent(0);
  for (auto _ : state) {
    hooks().recordEvent(event, stream);
    benchmark::DoNotOptimize(hooks().queryEvent(event));
  }
  hooks().synchronizeStream(stream);
  hooks().destroyEvent(event);
}
BENCHMARK(EventRecordQuery);

void CopyHostToDevice(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  accel::DataPtr host = hooks().getPinnedMemoryAllocator().allocate(bytes);
  std::memset(host.get(), 1, bytes);
  accel::DataPtr device = accel::openreg::allocate(bytes, 0);
  for (auto _ : state) accel::openreg::copy(device.get(), host.get(), bytes);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(CopyHostToDevice)->Arg(64 << 10)->Arg(1 << 20)->Arg(16 << 20)->UseRealTime();

void CopyDeviceToHost(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  accel::DataPtr host = hooks().getPinnedMemoryAllocator().allocate(bytes);
  accel::DataPtr device = accel::openreg::allocate(bytes, 0);
  std::memset(host.get(), 1, bytes);
  accel::openreg::copy(device.get(), host.get(), bytes);
  for (auto _ : state) accel::openreg::copy(host.get(), device.get(), bytes);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(CopyDeviceToHost)->Arg(64 << 10)->Arg(1 << 20)->Arg(16 << 20)->UseRealTime();

void MemcpyBaseline(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::vector<char> source(bytes, 1);
  std::vector<char> destination(bytes);
  for (auto _ : state) {
    std::memcpy(destination.data(), source.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(MemcpyBaseline)->Arg(64 << 10)->Arg(1 << 20)->Arg(16 << 20)->UseRealTime();

void DefaultGeneratorViaContext(benchmark::State& state) {
  const accel::Device device(hooks().deviceType(), 0);
  (void)accel::globalContext().defaultGenerator(device);  // created outside the loop
  for (auto _ : state) {
    benchmark::DoNotOptimize(accel::globalContext().defaultGenerator(device));
  }
}
BENCHMARK(DefaultGeneratorViaContext);

void DefaultGeneratorViaHooks(benchmark::State& state) {
  const accel::DeviceType type = hooks().deviceType();
  (void)accel::getHooks(type).getDefaultGenerator(0);
  for (auto _ : state)
    benchmark::DoNotOptimize(accel::getHooks(type).getDefaultGenerator(0));
}
BENCHMARK(DefaultGeneratorViaHooks);

void GeneratorCopyBaseline(benchmark::State& state) {
  const accel::Generator generator = hooks().getDefaultGenerator(0);
  for (auto _ : state) {
    accel::Generator copy = generator;
    benchmark::DoNotOptimize(copy);
  }
}
BENCHMARK(GeneratorCopyBaseline);

void CurrentDeviceViaHooks(benchmark::State& state) {
  const accel::DeviceType type = hooks().deviceType();
  for (auto _ : state) benchmark::DoNotOptimize(accel::getHooks(type).getCurrentDevice());
}
BENCHMARK(CurrentDeviceViaHooks);

void CurrentStreamViaHooks(benchmark::State& state) {
  const accel::DeviceType type = hooks().deviceType();
  for (auto _ : state)
    benchmark::DoNotOptimize(accel::getHooks(type).getCurrentStream(0));
}
BENCHMARK(CurrentStreamViaHooks);

// openreg's uniform fill of `count` floats on a stream, waited for: the
// fill's path from the API to the kernel and the kernel itself.
void FillUniformOnStream(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  const accel::Stream stream = hooks().getNewStream(0);
  accel::DataPtr data = accel::openreg::allocate(count * sizeof(float), 0);
  for (auto _ : state) {
    accel::fillUniform(stream, static_cast<float*>(data.get()), count);
    hooks().synchronizeStream(stream);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * count * 4));
}
BENCHMARK(FillUniformOnStream)->Arg(1 << 10)->Arg(16 << 20)->UseRealTime();

}  // namespace

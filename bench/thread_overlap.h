// Whether a benchmark's threads really ran at once: on a loaded two-core
// machine two benchmark threads may take turns, and a figure from threads
// that never overlapped says nothing about their contention.
//
// OverlapMeter measures one thread's loop and reports `overlap`: the
// thread's CPU time over the loop's wall time, averaged over the threads
// (1.0: every thread ran throughout). Make one before the loop, call
// report() after it, on the thread that ran it.
//
// Thread-safety: one meter per thread; threadCpuNs is thread-safe. Never
// throw.
#pragma once

#include <benchmark/benchmark.h>
#include <time.h>

#include <chrono>

namespace accel::bench {

// The calling thread's CPU time, in nanoseconds.
inline double threadCpuNs() noexcept {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e9 + static_cast<double>(now.tv_nsec);
}

class OverlapMeter {
 public:
  OverlapMeter() noexcept
      : wall_begin_(std::chrono::steady_clock::now()), cpu_begin_(threadCpuNs()) {}

  void report(benchmark::State& state) const {
    const double cpu = threadCpuNs() - cpu_begin_;
    const double wall = std::chrono::duration<double, std::nano>(
                            std::chrono::steady_clock::now() - wall_begin_)
                            .count();
    state.counters["overlap"] =
        benchmark::Counter(wall > 0 ? cpu / wall : 0.0, benchmark::Counter::kAvgThreads);
  }

 private:
  std::chrono::steady_clock::time_point wall_begin_;
  double cpu_begin_;
};

}  // namespace accel::bench

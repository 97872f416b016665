// PairedTimes: a benchmark and its baseline alternated within each
// iteration, for the OpenCL benchmarks on a shared machine.
//
// On a machine shared with other jobs, a latency measured in one benchmark
// and its baseline measured seconds later see different loads. A paired
// benchmark times both within each iteration (time()), then reports the
// median of each and their ratio (report(): counters *_ns and ratio), so
// both halves of every pair run under the same load.
// Thread-safety: one object per benchmark thread.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <vector>

struct PairedTimes {
  std::vector<double> ours, raw;
  template <typename F>
  static double time(F&& f) {
    const auto start = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() -
                                                    start)
        .count();
  }
  static double median(std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  }
  void report(benchmark::State& state, const char* ours_name, const char* raw_name) {
    if (ours.empty()) return;
    const double o = median(ours), r = median(raw);
    state.counters[ours_name] = o;
    state.counters[raw_name] = r;
    state.counters["ratio"] = o / r;
  }
};

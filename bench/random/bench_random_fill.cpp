// Uniform float fill of 64 MiB: the scalar, AVX2 and AVX-512 paths on one
// core, the auto path on two threads, and the BASELINE: std::mt19937 with
// std::uniform_real_distribution<float>, the usual way to fill a buffer.
//
// Targets: SIMD >= 3 GB/s per core and >= 10x the baseline; the
// threaded fill >= 1.8x one thread on 2 cores. Read GBps_per_core (10^9 bytes
// per second of wall time, divided by the threads used). Wall time, because
// worker threads' CPU time is not the calling thread's.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <random>
#include <vector>

#include "accel/random_fill.h"

namespace accel {
namespace {

constexpr std::size_t kBytes = 64u << 20;
constexpr std::size_t kFloats = kBytes / sizeof(float);

void report(benchmark::State& state, unsigned threads) {
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kBytes));
  state.counters["GBps_per_core"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kBytes / 1e9 / threads,
                         benchmark::Counter::kIsRate);
}

void fillUniformFloat(benchmark::State& state, FillPath path, unsigned threads) {
  if (!isFillPathSupported(path)) {
    state.SkipWithError("fill path not supported on this CPU");
    return;
  }
  std::vector<float> out(kFloats);
  std::uint64_t offset = 0;
  fillUniform(out, {42, offset}, {path, threads});  // touch the pages first
  for (auto _ : state) {
    offset += kFloats;
    fillUniform(out, {42, offset}, {path, threads});
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  report(state, threads);
}

void BM_UniformFloat_Scalar(benchmark::State& state) {
  fillUniformFloat(state, FillPath::Scalar, 1);
}
void BM_UniformFloat_Avx2(benchmark::State& state) {
  fillUniformFloat(state, FillPath::Avx2, 1);
}
void BM_UniformFloat_Avx512(benchmark::State& state) {
  fillUniformFloat(state, FillPath::Avx512, 1);
}
void BM_UniformFloat_Auto_2Threads(benchmark::State& state) {
  fillUniformFloat(state, FillPath::Auto, 2);
}

void BM_UniformFloat_Baseline_Mt19937(benchmark::State& state) {
  std::vector<float> out(kFloats, 0.0f);
  std::mt19937 engine(42);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  for (auto _ : state) {
    for (float& value : out) value = uniform(engine);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  report(state, 1);
}

// For reference: the normal fill, whose log and sin/cos dominate.
void BM_NormalFloat_Auto(benchmark::State& state) {
  std::vector<float> out(kFloats);
  std::uint64_t offset = 0;
  fillNormal(out, 0.0f, 1.0f, {42, offset});
  for (auto _ : state) {
    offset += kFloats;
    fillNormal(out, 0.0f, 1.0f, {42, offset});
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  report(state, 1);
}

BENCHMARK(BM_UniformFloat_Baseline_Mt19937)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_UniformFloat_Scalar)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_UniformFloat_Avx2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_UniformFloat_Avx512)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_UniformFloat_Auto_2Threads)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NormalFloat_Auto)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace accel

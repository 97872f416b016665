// cuBLAS handle reserve + bind: the call every cuBLAS operation makes. Fast
// path (same thread, same stream), a stream switch on every call (rebinds
// stream and workspace), against cublasCreate/cublasDestroy per call (what
// the pool saves) in the same run.
#include <cublas_v2.h>

#include "accel/accel.h"
#include "accel/cuda/handles.h"
#include "gpu_bench_main.h"

namespace {

void BM_ReserveCublasHandleSameStream(benchmark::State& state) {
  (void)accel::cuda::getCurrentCublasHandle(0);
  for (auto _ : state) benchmark::DoNotOptimize(accel::cuda::getCurrentCublasHandle(0));
}
BENCHMARK(BM_ReserveCublasHandleSameStream);

void BM_ReserveCublasHandleAlternatingStreams(benchmark::State& state) {
  accel::AcceleratorHooks& cuda = accel::cuda::registerBackend();
  const accel::Stream streams[2] = {cuda.getNewStream(0), cuda.getNewStream(0)};
  int next = 0;
  for (auto _ : state) {
    accel::StreamGuard guard(streams[next ^= 1]);
    benchmark::DoNotOptimize(accel::cuda::getCurrentCublasHandle(0));
  }
}
BENCHMARK(BM_ReserveCublasHandleAlternatingStreams);

void BM_CublasCreateDestroy(benchmark::State& state) {
  for (auto _ : state) {
    cublasHandle_t handle = nullptr;
    cublasCreate(&handle);
    benchmark::DoNotOptimize(handle);
    cublasDestroy(handle);
  }
}
BENCHMARK(BM_CublasCreateDestroy);

}  // namespace

int main(int argc, char** argv) {
  return runCudaBenchmarks(argc, argv, "cuda_handle_bench");
}

// Device allocation: one allocate + free of 1 MiB through the backend's
// device allocator (the core caching allocator: after the first iteration
// every allocation is a cache hit), against cudaMalloc/cudaFree and
// cudaMallocAsync/cudaFreeAsync in the same run. Target: cache
// hits >= 100x faster than cudaMalloc.
#include <cuda_runtime.h>

#include "accel/accel.h"
#include "gpu_bench_main.h"

namespace {

constexpr std::size_t kBytes = std::size_t{1} << 20;

void BM_BackendAllocator(benchmark::State& state) {
  accel::Allocator& allocator = accel::cuda::registerBackend().getDeviceAllocator(0);
  for (auto _ : state) {
    accel::DataPtr block = allocator.allocate(kBytes);
    benchmark::DoNotOptimize(block.get());
  }
}
BENCHMARK(BM_BackendAllocator);

void BM_CudaMallocFree(benchmark::State& state) {
  for (auto _ : state) {
    void* block = nullptr;
    cudaMalloc(&block, kBytes);
    benchmark::DoNotOptimize(block);
    cudaFree(block);
  }
}
BENCHMARK(BM_CudaMallocFree);

void BM_CudaMallocAsyncFreeAsync(benchmark::State& state) {
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  for (auto _ : state) {
    void* block = nullptr;
    cudaMallocAsync(&block, kBytes, stream);
    benchmark::DoNotOptimize(block);
    cudaFreeAsync(block, stream);
  }
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
}
BENCHMARK(BM_CudaMallocAsyncFreeAsync);

}  // namespace

int main(int argc, char** argv) {
  return runCudaBenchmarks(argc, argv, "cuda_alloc_bench");
}

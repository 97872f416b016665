// Philox uniform fill of device memory: accel::fillUniform against
// cuRAND's Philox4_32_10 generator (curandGenerateUniform) and, as the
// ceiling, a device-to-device copy of the same bytes. Targets:
// >= cuRAND, >= 70% of the copy's bandwidth. bytes_per_second is written.
#include <cuda_runtime.h>
#include <curand.h>

#include "accel/accel.h"
#include "accel/device_fill.h"
#include "gpu_bench_main.h"

namespace {

constexpr std::size_t kCount = std::size_t{64} << 20;  // 256 MiB of floats

struct DeviceBuffer {
  float* data = nullptr;
  DeviceBuffer() { (void)cudaMalloc(&data, kCount * sizeof(float)); }
  ~DeviceBuffer() { (void)cudaFree(data); }
};

void BM_AccelPhiloxUniform(benchmark::State& state) {
  accel::AcceleratorHooks& cuda = accel::cuda::registerBackend();
  // The core's fills write memory of its device cache only.
  const accel::DataPtr block =
      cuda.getDeviceAllocator(0).allocate(kCount * sizeof(float));
  auto* data = static_cast<float*>(block.get());
  const accel::Stream stream = cuda.getCurrentStream(0);
  for (auto _ : state) {
    accel::fillUniform(stream, data, kCount);
    cuda.synchronizeStream(stream);
  }
  state.SetBytesProcessed(state.iterations() * kCount * sizeof(float));
}
BENCHMARK(BM_AccelPhiloxUniform)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_CurandPhilox4_32_10Uniform(benchmark::State& state) {
  DeviceBuffer buffer;
  curandGenerator_t generator = nullptr;
  curandCreateGenerator(&generator, CURAND_RNG_PSEUDO_PHILOX4_32_10);
  curandSetPseudoRandomGeneratorSeed(generator, 42);
  for (auto _ : state) {
    curandGenerateUniform(generator, buffer.data, kCount);
    cudaDeviceSynchronize();
  }
  curandDestroyGenerator(generator);
  state.SetBytesProcessed(state.iterations() * kCount * sizeof(float));
}
BENCHMARK(BM_CurandPhilox4_32_10Uniform)->UseRealTime()->Unit(benchmark::kMicrosecond);

// The bandwidth ceiling: write the same bytes (a copy also reads them, so the
// fill's target is 70% of this figure).
void BM_DeviceCopySameBytes(benchmark::State& state) {
  DeviceBuffer from, to;
  for (auto _ : state) {
    cudaMemcpy(to.data, from.data, kCount * sizeof(float), cudaMemcpyDeviceToDevice);
    cudaDeviceSynchronize();
  }
  state.SetBytesProcessed(state.iterations() * kCount * sizeof(float));
}
BENCHMARK(BM_DeviceCopySameBytes)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  return runCudaBenchmarks(argc, argv, "cuda_fill_bench");
}

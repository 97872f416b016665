// CLBlast SGEMM (C = A * B, row-major, square) through accelhooks against
// CLBlast called directly, same sizes, same process (issue 18: ≤ 1.02×).
//
//   Sgemm_OurStream:      an accelhooks stream's queue (in order, profiling
//                         on, as every stream of the backend), memory from the
//                         caching allocator (SVM), inputs from the backend's
//                         fills; each call wraps the three allocations as
//                         CL_MEM_USE_HOST_PTR buffers (svmAllocation), as
//                         examples/opencl_gemm does, and releases them after.
//   Sgemm_ClBlastDirect:  a context and queue of the bench's own on the same
//                         cl_device_id, buffers from clCreateBuffer, written
//                         once.
// Both pass CLBlast a scratch buffer of the size it asks for (ours from the
// allocator, direct from clCreateBuffer) and wait with clFinish / the
// stream's synchronize, so each iteration is one whole GEMM. Compilation
// (CLBlast's first call per context) happens before timing. Real time: the
// GEMM runs on the driver's threads.
#include <benchmark/benchmark.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <clblast.h>
#include <span>
#include <string>
#include <vector>

#include "accel/accel.h"
#include "accel/opencl/fill.h"
#include "accel/opencl/opencl.h"
#include "accel/philox_generator.h"
#include "accel/random_fill.h"
#include "accel/stream_guard.h"

namespace {

using accel::opencl::registerBackend;

bool ready(benchmark::State& state) {
  if (registerBackend().isAvailable()) return true;
  state.SkipWithError(
      ("no OpenCL device: " + accel::opencl::availability().reason).c_str());
  return false;
}

clblast::StatusCode gemm(std::size_t n, cl_mem a, std::size_t a_offset, cl_mem b,
                         std::size_t b_offset, cl_mem c, std::size_t c_offset,
                         cl_command_queue queue, cl_mem temp) {
  return clblast::Gemm(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                       clblast::Transpose::kNo, n, n, n, 1.0f, a, a_offset, n, b,
                       b_offset, n, 0.0f, c, c_offset, n, &queue, nullptr, temp);
}

std::size_t tempBytes(std::size_t n, cl_command_queue queue) {
  std::size_t bytes = 0;
  if (clblast::GemmTempBufferSize<float>(
          clblast::Layout::kRowMajor, clblast::Transpose::kNo, clblast::Transpose::kNo, n,
          n, n, 0, n, 0, n, 0, n, &queue, bytes) != clblast::StatusCode::kSuccess) {
    return 0;
  }
  return bytes;
}

// A CL_MEM_USE_HOST_PTR buffer over the SVM allocation holding `ptr`.
struct Wrapped {
  cl_mem buffer = nullptr;
  std::size_t offset = 0;  // in floats
};
Wrapped wrap(const void* ptr) {
  if (ptr == nullptr) return {};
  const accel::opencl::SvmAllocation a = accel::opencl::svmAllocation(ptr);
  cl_mem buffer =
      clCreateBuffer(accel::opencl::nativeContext(a.device),
                     CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, a.bytes, a.base, nullptr);
  return {buffer, a.offset / sizeof(float)};
}
void release(const Wrapped& w) {
  if (w.buffer != nullptr) clReleaseMemObject(w.buffer);
}

void BM_Sgemm_OurStream(benchmark::State& state) {
  if (!ready(state)) return;
  const auto n = static_cast<std::size_t>(state.range(0));
  accel::AcceleratorHooks& hooks = registerBackend();
  const accel::Stream stream = hooks.getNewStream(0);
  accel::StreamGuard guard(stream);
  accel::Allocator& allocator = hooks.getDeviceAllocator(0);
  accel::DataPtr a = allocator.allocate(n * n * sizeof(float));
  accel::DataPtr b = allocator.allocate(n * n * sizeof(float));
  accel::DataPtr c = allocator.allocate(n * n * sizeof(float));
  accel::Generator g =
      accel::makePhiloxGenerator(accel::Device(accel::opencl::deviceType(), 0));
  accel::opencl::fillUniform(stream, static_cast<float*>(a.get()), n * n, -1.0f, 1.0f, g);
  accel::opencl::fillUniform(stream, static_cast<float*>(b.get()), n * n, -1.0f, 1.0f, g);
  cl_command_queue queue = accel::opencl::nativeQueue(stream);
  accel::DataPtr temp = allocator.allocate(tempBytes(n, queue));

  auto once = [&] {
    const Wrapped wa = wrap(a.get()), wb = wrap(b.get()), wc = wrap(c.get()),
                  wt = wrap(temp.get());
    const clblast::StatusCode status = gemm(n, wa.buffer, wa.offset, wb.buffer, wb.offset,
                                            wc.buffer, wc.offset, queue, wt.buffer);
    hooks.synchronizeStream(stream);
    release(wa);
    release(wb);
    release(wc);
    release(wt);
    return status;
  };
  if (const clblast::StatusCode status = once();
      status != clblast::StatusCode::kSuccess) {
    state.SkipWithError(("clblast::Gemm: status " + std::to_string(int(status))).c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(once());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * 2 * n * n * n));
}

// A context, queue and buffers that are the bench's own, released at the end.
struct DirectSetup {
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  cl_mem a = nullptr, b = nullptr, c = nullptr, temp = nullptr;
  ~DirectSetup() {
    for (cl_mem m : {a, b, c, temp}) {
      if (m != nullptr) clReleaseMemObject(m);
    }
    if (queue != nullptr) clReleaseCommandQueue(queue);
    if (context != nullptr) clReleaseContext(context);
  }
};

void BM_Sgemm_ClBlastDirect(benchmark::State& state) {
  if (!ready(state)) return;
  const auto n = static_cast<std::size_t>(state.range(0));
  cl_device_id device = accel::opencl::nativeDevice(0);
  DirectSetup s;
  cl_int status = CL_SUCCESS;
  s.context = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
  s.queue = clCreateCommandQueueWithProperties(s.context, device, nullptr, &status);
  const std::size_t bytes = n * n * sizeof(float);
  s.a = clCreateBuffer(s.context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
  s.b = clCreateBuffer(s.context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
  s.c = clCreateBuffer(s.context, CL_MEM_READ_WRITE, bytes, nullptr, &status);
  if (const std::size_t t = tempBytes(n, s.queue); t > 0) {
    s.temp = clCreateBuffer(s.context, CL_MEM_READ_WRITE, t, nullptr, &status);
  }
  if (status != CL_SUCCESS) {
    state.SkipWithError(("OpenCL setup failed: " + std::to_string(status)).c_str());
    return;
  }
  // The same inputs as the other side (the host fill of the same stream).
  std::vector<float> host(n * n);
  accel::Generator g =
      accel::makePhiloxGenerator(accel::Device(accel::DeviceType::CPU, 0));
  accel::fillUniform(std::span<float>(host), -1.0f, 1.0f, g);
  clEnqueueWriteBuffer(s.queue, s.a, CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr);
  accel::fillUniform(std::span<float>(host), -1.0f, 1.0f, g);
  clEnqueueWriteBuffer(s.queue, s.b, CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr);

  auto once = [&] {
    const clblast::StatusCode result = gemm(n, s.a, 0, s.b, 0, s.c, 0, s.queue, s.temp);
    clFinish(s.queue);
    return result;
  };
  if (const clblast::StatusCode result = once();
      result != clblast::StatusCode::kSuccess) {
    state.SkipWithError(("clblast::Gemm: status " + std::to_string(int(result))).c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(once());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * 2 * n * n * n));
}

// What the accelhooks side adds per call, alone: four svmAllocation lookups
// and CL_MEM_USE_HOST_PTR buffers made and released (the GEMM's inputs,
// output and scratch).
void BM_WrapFourAllocations(benchmark::State& state) {
  if (!ready(state)) return;
  accel::AcceleratorHooks& hooks = registerBackend();
  accel::Allocator& allocator = hooks.getDeviceAllocator(0);
  std::vector<accel::DataPtr> data;
  for (int i = 0; i < 4; ++i) data.push_back(allocator.allocate(std::size_t{1} << 20));
  for (auto _ : state) {
    Wrapped w[4];
    for (int i = 0; i < 4; ++i) w[i] = wrap(data[i].get());
    for (const Wrapped& one : w) release(one);
  }
}
BENCHMARK(BM_WrapFourAllocations)->UseRealTime();

BENCHMARK(BM_Sgemm_OurStream)
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sgemm_ClBlastDirect)
    ->Arg(256)
    ->Arg(512)
    ->Arg(1024)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace

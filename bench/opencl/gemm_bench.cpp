// CLBlast SGEMM (C = A * B, row-major, square) through accelhooks against
// CLBlast called directly, same sizes, same process (≤ 1.02×).
//
//   Sgemm_OurStream:      an accelhooks stream's queue (in order, profiling
//                         on, as every stream of the backend), memory from the
//                         caching allocator (SVM), inputs from the backend's
//                         fills; each call wraps the four allocations as
//                         CL_MEM_USE_HOST_PTR buffers (svmAllocation), as
//                         examples/opencl_gemm does, and releases them after.
//   Sgemm_ClBlastDirect:  a context and queue of the bench's own on the same
//                         cl_device_id, buffers from clCreateBuffer, written
//                         once.
//   Sgemm_Paired:         both in every iteration, in alternating order, so
//                         that both see the same load (paired_times.h);
//                         counters ours_ns, direct_ns (medians), ratio.
// Both pass CLBlast a scratch buffer of the size it asks for (ours from the
// allocator, direct from clCreateBuffer) and wait with clFinish / the
// stream's synchronize, so each iteration is one whole GEMM. Compilation
// (CLBlast's first call per context) happens before timing. Real time: the
// GEMM runs on the driver's threads.
#include <benchmark/benchmark.h>
#include <cstdlib>
#include <string_view>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <clblast.h>
#include <span>
#include <string>
#include <vector>

#include "accel/accel.h"
#include "accel/device_fill.h"
#include "accel/opencl/opencl.h"
#include "accel/philox_generator.h"
#include "accel/random_fill.h"
#include "accel/stream_guard.h"
#include "opencl_ready.h"
#include "paired_times.h"

namespace {

using accel::opencl::registerBackend;

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

// The accelhooks side: a stream, allocator memory filled by the backend.
class OurSgemm {
 public:
  explicit OurSgemm(std::size_t n)
      : n_(n),
        hooks_(registerBackend()),
        stream_(hooks_.getNewStream(0)),
        guard_(stream_),
        queue_(accel::opencl::nativeQueue(stream_)) {
    accel::Allocator& allocator = hooks_.getDeviceAllocator(0);
    a_ = allocator.allocate(n * n * sizeof(float));
    b_ = allocator.allocate(n * n * sizeof(float));
    c_ = allocator.allocate(n * n * sizeof(float));
    accel::Generator g =
        accel::makePhiloxGenerator(accel::Device(accel::opencl::deviceType(), 0));
    accel::fillUniform(stream_, static_cast<float*>(a_.get()), n * n, -1.0f, 1.0f, g);
    accel::fillUniform(stream_, static_cast<float*>(b_.get()), n * n, -1.0f, 1.0f, g);
    temp_ = allocator.allocate(tempBytes(n, queue_));
  }
  // One GEMM, waited for, wrapping the allocations for the call.
  clblast::StatusCode once() {
    const Wrapped wa = wrap(a_.get()), wb = wrap(b_.get()), wc = wrap(c_.get()),
                  wt = wrap(temp_.get());
    const clblast::StatusCode status =
        gemm(n_, wa.buffer, wa.offset, wb.buffer, wb.offset, wc.buffer, wc.offset, queue_,
             wt.buffer);
    hooks_.synchronizeStream(stream_);
    for (const Wrapped& w : {wa, wb, wc, wt}) release(w);
    return status;
  }

 private:
  std::size_t n_;
  accel::AcceleratorHooks& hooks_;
  accel::Stream stream_;
  accel::StreamGuard guard_;
  cl_command_queue queue_;
  accel::DataPtr a_, b_, c_, temp_;
};

// The direct side: a context, queue and buffers of the bench's own on the
// same device, the same inputs written once; released at the end.
class DirectSgemm {
 public:
  explicit DirectSgemm(std::size_t n) : n_(n) {
    cl_device_id device = accel::opencl::nativeDevice(0);
    context_ = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status_);
    // GEMM_DIRECT_PROFILING=1 gives the direct queue profiling, as every
    // accelhooks queue has (for elapsedTime): like for like.
    const cl_queue_properties profiling[] = {CL_QUEUE_PROPERTIES,
                                             CL_QUEUE_PROFILING_ENABLE, 0};
    const char* like_ours = std::getenv("GEMM_DIRECT_PROFILING");
    const bool profile = like_ours != nullptr && std::string_view(like_ours) == "1";
    queue_ = clCreateCommandQueueWithProperties(context_, device,
                                                profile ? profiling : nullptr, &status_);
    const std::size_t bytes = n * n * sizeof(float);
    for (cl_mem* m : {&a_, &b_, &c_}) {
      *m = clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &status_);
    }
    if (const std::size_t t = tempBytes(n, queue_); t > 0) {
      temp_ = clCreateBuffer(context_, CL_MEM_READ_WRITE, t, nullptr, &status_);
    }
    if (status_ != CL_SUCCESS) return;
    // The numbers the other side's device fills write.
    std::vector<float> host(n * n);
    accel::Generator g =
        accel::makePhiloxGenerator(accel::Device(accel::DeviceType::CPU, 0));
    for (cl_mem m : {a_, b_}) {
      accel::fillUniform(std::span<float>(host), -1.0f, 1.0f, g);
      clEnqueueWriteBuffer(queue_, m, CL_TRUE, 0, bytes, host.data(), 0, nullptr,
                           nullptr);
    }
  }
  DirectSgemm(const DirectSgemm&) = delete;
  DirectSgemm& operator=(const DirectSgemm&) = delete;
  ~DirectSgemm() {
    for (cl_mem m : {a_, b_, c_, temp_}) {
      if (m != nullptr) clReleaseMemObject(m);
    }
    if (queue_ != nullptr) clReleaseCommandQueue(queue_);
    if (context_ != nullptr) clReleaseContext(context_);
  }
  [[nodiscard]] cl_int setupStatus() const { return status_; }
  clblast::StatusCode once() {
    const clblast::StatusCode result = gemm(n_, a_, 0, b_, 0, c_, 0, queue_, temp_);
    clFinish(queue_);
    return result;
  }

 private:
  std::size_t n_;
  cl_int status_ = CL_SUCCESS;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_mem a_ = nullptr, b_ = nullptr, c_ = nullptr, temp_ = nullptr;
};

// Runs `side.once()` first (CLBlast compiles its kernels for a context on
// its first call: not timed); false, with the state skipped, when it fails.
template <typename Side>
bool warmUp(benchmark::State& state, Side& side) {
  const clblast::StatusCode status = side.once();
  if (status == clblast::StatusCode::kSuccess) return true;
  state.SkipWithError(("clblast::Gemm: status " + std::to_string(int(status))).c_str());
  return false;
}

void BM_Sgemm_OurStream(benchmark::State& state) {
  if (!openClReady(state)) return;
  const auto n = static_cast<std::size_t>(state.range(0));
  OurSgemm ours(n);
  if (!warmUp(state, ours)) return;
  for (auto _ : state) benchmark::DoNotOptimize(ours.once());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * 2 * n * n * n));
}

void BM_Sgemm_ClBlastDirect(benchmark::State& state) {
  if (!openClReady(state)) return;
  const auto n = static_cast<std::size_t>(state.range(0));
  DirectSgemm direct(n);
  if (direct.setupStatus() != CL_SUCCESS) {
    state.SkipWithError(
        ("OpenCL setup failed: " + std::to_string(direct.setupStatus())).c_str());
    return;
  }
  if (!warmUp(state, direct)) return;
  for (auto _ : state) benchmark::DoNotOptimize(direct.once());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * 2 * n * n * n));
}

// Both sides in every iteration, in alternating order (PairedTimes):
// counters ours_ns, direct_ns (medians) and ratio = ours / direct.
void BM_Sgemm_Paired(benchmark::State& state) {
  if (!openClReady(state)) return;
  const auto n = static_cast<std::size_t>(state.range(0));
  OurSgemm ours(n);
  DirectSgemm direct(n);
  if (direct.setupStatus() != CL_SUCCESS) {
    state.SkipWithError(
        ("OpenCL setup failed: " + std::to_string(direct.setupStatus())).c_str());
    return;
  }
  if (!warmUp(state, ours) || !warmUp(state, direct)) return;
  PairedTimes times;
  bool ours_first = true;
  for (auto _ : state) {
    if (ours_first) {
      times.ours.push_back(PairedTimes::time([&] { ours.once(); }));
      times.raw.push_back(PairedTimes::time([&] { direct.once(); }));
    } else {
      times.raw.push_back(PairedTimes::time([&] { direct.once(); }));
      times.ours.push_back(PairedTimes::time([&] { ours.once(); }));
    }
    ours_first = !ours_first;
  }
  times.report(state, "ours_ns", "direct_ns");
}

// What the accelhooks side adds per call, alone: four svmAllocation lookups
// and CL_MEM_USE_HOST_PTR buffers made and released (the GEMM's inputs,
// output and scratch).
void BM_WrapFourAllocations(benchmark::State& state) {
  if (!openClReady(state)) return;
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
BENCHMARK(BM_Sgemm_Paired)
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

// The OpenCL backend against raw OpenCL in the same process:
//   - stream record + event wait round trip vs clEnqueueMarkerWithWaitList +
//     clWaitForEvents;
//   - cached device alloc + free pair vs clSVMAlloc + clSVMFree;
//   - uniform fill on the device vs the host fill on the same cores (bytes/s);
//   - uniform fill on the device vs a store-only kernel of the same shape;
//   - one kernel (same program, same work) from a per-thread handle pool vs
//     clCreateKernel + clReleaseKernel per call.
// Ratios are read from medians (docs/performance.md); the machine is shared.
#include <benchmark/benchmark.h>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <span>
#include <string_view>
#include <vector>

#include "accel/accel.h"
#include "accel/device_fill.h"
#include "accel/handle_pool.h"
#include "accel/memory/caching_allocator.h"
#include "accel/memory/segment_source.h"
#include "accel/opencl/opencl.h"
#include "accel/philox_generator.h"
#include "accel/random_fill.h"
#include "opencl_ready.h"
#include "paired_times.h"

namespace {

using accel::opencl::registerBackend;

void BM_RecordAndWait_Hooks(benchmark::State& state) {
  if (!openClReady(state)) return;
  accel::AcceleratorHooks& hooks = registerBackend();
  const accel::Stream stream = hooks.getDefaultStream(0);
  const accel::EventId event = hooks.createEvent(0);
  for (auto _ : state) {
    hooks.recordEvent(event, stream);
    hooks.synchronizeEvent(event);
  }
  hooks.destroyEvent(event);
}
BENCHMARK(BM_RecordAndWait_Hooks);

// The raw equivalent of record + synchronize: a marker, the flush that
// recordEvent must do (a marker is only sure to start once its queue is
// flushed, and a host waiting for the event must see progress), the wait,
// the release. The hooks make the same four calls per round trip.
void BM_RecordAndWait_RawOpenCl(benchmark::State& state) {
  if (!openClReady(state)) return;
  cl_command_queue queue =
      accel::opencl::nativeQueue(registerBackend().getDefaultStream(0));
  for (auto _ : state) {
    cl_event marker = nullptr;
    clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker);
    clFlush(queue);
    clWaitForEvents(1, &marker);
    clReleaseEvent(marker);
  }
}
BENCHMARK(BM_RecordAndWait_RawOpenCl);

// The OpenCL calls the hooks made before they counted a marker's waiters
// themselves: the previous marker released on the next record, and the
// marker retained around the wait (clRetainEvent/clReleaseEvent take pocl's
// lock on the event). Kept to show what that cost.
void BM_RecordAndWait_RawRetainAroundWait(benchmark::State& state) {
  if (!openClReady(state)) return;
  cl_command_queue queue =
      accel::opencl::nativeQueue(registerBackend().getDefaultStream(0));
  cl_event previous = nullptr;
  for (auto _ : state) {
    cl_event marker = nullptr;
    clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker);
    clFlush(queue);
    if (previous != nullptr) clReleaseEvent(previous);
    previous = marker;
    clRetainEvent(marker);
    clWaitForEvents(1, &marker);
    clReleaseEvent(marker);
  }
  if (previous != nullptr) clReleaseEvent(previous);
}
BENCHMARK(BM_RecordAndWait_RawRetainAroundWait);

void BM_RecordAndWait_Paired(benchmark::State& state) {
  if (!openClReady(state)) return;
  accel::AcceleratorHooks& hooks = registerBackend();
  const accel::Stream stream = hooks.getDefaultStream(0);
  cl_command_queue queue = accel::opencl::nativeQueue(stream);
  const accel::EventId event = hooks.createEvent(0);
  PairedTimes times;
  for (auto _ : state) {
    times.ours.push_back(PairedTimes::time([&] {
      hooks.recordEvent(event, stream);
      hooks.synchronizeEvent(event);
    }));
    times.raw.push_back(PairedTimes::time([&] {
      cl_event marker = nullptr;
      clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker);
      clFlush(queue);
      clWaitForEvents(1, &marker);
      clReleaseEvent(marker);
    }));
  }
  hooks.destroyEvent(event);
  times.report(state, "hooks_ns", "raw_ns");
}
BENCHMARK(BM_RecordAndWait_Paired);

void BM_AllocFreePair_Cached(benchmark::State& state) {
  if (!openClReady(state)) return;
  accel::Allocator& allocator = registerBackend().getDeviceAllocator(0);
  const auto bytes = static_cast<std::size_t>(state.range(0));
  { accel::DataPtr warm = allocator.allocate(bytes); }
  for (auto _ : state) {
    accel::DataPtr data = allocator.allocate(bytes);
    benchmark::DoNotOptimize(data.get());
  }
}
// 256 B to 256 MiB: pocl's clSVMAlloc is a host allocation, a malloc for
// small sizes and an mmap for large ones (glibc's threshold), so the raw
// pair's cost grows with size while the cached pair's does not.
void allocSizes(benchmark::internal::Benchmark* b) {
  for (std::int64_t bytes : {256, 1 << 20, 16 << 20, 64 << 20, 256 << 20}) b->Arg(bytes);
}

BENCHMARK(BM_AllocFreePair_Cached)->Apply(allocSizes);

// The core CachingAllocator's pair over a host source, in this process: what
// the OpenCL allocator's pair costs without the backend's wrapper (its
// current-stream lookup, its DataPtr), so that the wrapper's share shows.
class HostSegments final : public accel::memory::SegmentSource {
 public:
  void* allocateSegment(accel::DeviceIndex, std::size_t bytes) override {
    return std::malloc(bytes);
  }
  void freeSegment(accel::DeviceIndex, void* ptr, std::size_t) noexcept override {
    std::free(ptr);
  }
};

void BM_AllocFreePair_CoreOnly(benchmark::State& state) {
  HostSegments source;
  accel::memory::CachingAllocator allocator(accel::DeviceType::CUDA, 1, source);
  const accel::Stream stream(accel::Device::unchecked(accel::DeviceType::CUDA, 0), 0);
  const auto bytes = static_cast<std::size_t>(state.range(0));
  allocator.allocate(0, bytes, stream).reset();  // warm: the segment is cached
  for (auto _ : state) {
    accel::DataPtr data = allocator.allocate(0, bytes, stream);
    benchmark::DoNotOptimize(data.get());
  }
}
BENCHMARK(BM_AllocFreePair_CoreOnly)->Apply(allocSizes);

void BM_AllocFreePair_RawSvm(benchmark::State& state) {
  if (!openClReady(state)) return;
  cl_context context = accel::opencl::nativeContext(0);
  const auto bytes = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) {
    void* p = clSVMAlloc(context, CL_MEM_READ_WRITE, bytes, 0);
    benchmark::DoNotOptimize(p);
    clSVMFree(context, p);
  }
}
BENCHMARK(BM_AllocFreePair_RawSvm)->Apply(allocSizes);

constexpr std::size_t kFillCount = std::size_t{1} << 22;  // 16 MiB of floats

void BM_UniformFill_Device(benchmark::State& state) {
  if (!openClReady(state)) return;
  accel::AcceleratorHooks& hooks = registerBackend();
  accel::DataPtr data = hooks.getDeviceAllocator(0).allocate(kFillCount * sizeof(float));
  const accel::Stream stream = hooks.getDefaultStream(0);
  accel::Generator g =
      accel::makePhiloxGenerator(accel::Device(accel::opencl::deviceType(), 0));
  accel::fillUniform(stream, static_cast<float*>(data.get()), kFillCount, 0.0f, 1.0f, g);
  hooks.synchronizeStream(stream);  // the build is not measured
  for (auto _ : state) {
    accel::fillUniform(stream, static_cast<float*>(data.get()), kFillCount, 0.0f, 1.0f,
                       g);
    hooks.synchronizeStream(stream);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kFillCount * 4));
}
BENCHMARK(BM_UniformFill_Device)->UseRealTime();

void BM_UniformFill_Host(benchmark::State& state) {
  std::vector<float> out(kFillCount);
  accel::Generator g =
      accel::makePhiloxGenerator(accel::Device(accel::DeviceType::CPU, 0));
  accel::FillOptions options;
  options.threads = 0;  // every core, as pocl uses them
  for (auto _ : state) {
    accel::fillUniform(std::span<float>(out), g, options);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kFillCount * 4));
}
BENCHMARK(BM_UniformFill_Host)->UseRealTime();

// Device and host fill alternated (see PairedTimes); counters in ns per
// fill of kFillCount floats.
void BM_UniformFill_Paired(benchmark::State& state) {
  if (!openClReady(state)) return;
  accel::AcceleratorHooks& hooks = registerBackend();
  accel::DataPtr data = hooks.getDeviceAllocator(0).allocate(kFillCount * sizeof(float));
  const accel::Stream stream = hooks.getDefaultStream(0);
  accel::Generator device_gen =
      accel::makePhiloxGenerator(accel::Device(accel::opencl::deviceType(), 0));
  auto* device_out = static_cast<float*>(data.get());
  accel::fillUniform(stream, device_out, kFillCount, 0.0f, 1.0f, device_gen);
  hooks.synchronizeStream(stream);  // the build is not measured
  std::vector<float> host_out(kFillCount);
  accel::Generator host_gen =
      accel::makePhiloxGenerator(accel::Device(accel::DeviceType::CPU, 0));
  accel::FillOptions options;
  options.threads = 0;  // every core, as pocl uses them
  PairedTimes times;
  for (auto _ : state) {
    times.ours.push_back(PairedTimes::time([&] {
      accel::fillUniform(stream, device_out, kFillCount, 0.0f, 1.0f, device_gen);
      hooks.synchronizeStream(stream);
    }));
    times.raw.push_back(PairedTimes::time([&] {
      accel::fillUniform(std::span<float>(host_out), host_gen, options);
      benchmark::DoNotOptimize(host_out.data());
    }));
  }
  // Here ratio is device time / host time: bandwidth ratio is its inverse.
  times.report(state, "device_ns", "host_ns");
}
BENCHMARK(BM_UniformFill_Paired)->UseRealTime();

// The store-only baseline of the one-word fills: the shape of
// fill_uniform_f32 (src/fill_lanes.cl: one work-item per 64 floats,
// work-groups of 64, four 16-wide stores where the whole 64 fit, element by
// element at the end) storing a constant, so that what separates the two is
// drawing the numbers, not how the bytes are written.
cl_program storeOnlyProgram() {
  static const cl_program program = accel::opencl::buildProgram(0, R"(
typedef float16 __attribute__((aligned(4))) unaligned_float16;
kernel void store_only(global float* out, ulong count, float value) {
  const ulong first = 64 * get_global_id(0);
  if (first + 64 <= count) {
    for (int k = 0; k < 4; ++k)
      *(global unaligned_float16*)(out + first + 16 * k) = (float16)(value);
    return;
  }
  for (ulong e = first; e < count; ++e) out[e] = value;
})");
  return program;
}

// Device fill and store-only kernel alternated on one buffer and queue (see
// PairedTimes): ns per call, and bandwidth_ratio = store / fill time (the
// fill's share of the store-only bandwidth).
void BM_UniformFill_VsStoreOnly(benchmark::State& state) {
  if (!openClReady(state)) return;
  const auto count = static_cast<std::size_t>(state.range(0));
  accel::AcceleratorHooks& hooks = registerBackend();
  accel::DataPtr data = hooks.getDeviceAllocator(0).allocate(count * sizeof(float));
  auto* out = static_cast<float*>(data.get());
  const accel::Stream stream = hooks.getDefaultStream(0);
  cl_command_queue queue = accel::opencl::nativeQueue(stream);
  accel::Generator g =
      accel::makePhiloxGenerator(accel::Device(accel::opencl::deviceType(), 0));
  cl_kernel store = clCreateKernel(storeOnlyProgram(), "store_only", nullptr);
  const cl_ulong elements = count;
  const float value = 0.5f;
  clSetKernelArgSVMPointer(store, 0, out);
  clSetKernelArg(store, 1, sizeof elements, &elements);
  clSetKernelArg(store, 2, sizeof value, &value);
  const std::size_t local = 64;  // the fills' work-group size
  const std::size_t global = ((count + 63) / 64 + local - 1) / local * local;
  const auto storeOnly = [&] {
    clEnqueueNDRangeKernel(queue, store, 1, nullptr, &global, &local, 0, nullptr,
                           nullptr);
    clFinish(queue);
  };
  const auto fill = [&] {
    accel::fillUniform(stream, out, count, 0.0f, 1.0f, g);
    hooks.synchronizeStream(stream);
  };
  fill();  // the builds are not measured
  storeOnly();
  PairedTimes times;
  for (auto _ : state) {
    times.ours.push_back(PairedTimes::time(fill));
    times.raw.push_back(PairedTimes::time(storeOnly));
  }
  clReleaseKernel(store);
  times.report(state, "fill_ns", "store_ns");
  if (times.ours.empty()) return;
  state.counters["bandwidth_ratio"] = 1.0 / state.counters["ratio"];
  state.counters["fill_GBps"] =
      static_cast<double>(count * sizeof(float)) / state.counters["fill_ns"];
}
BENCHMARK(BM_UniformFill_VsStoreOnly)->Arg(1 << 20)->Arg(1 << 24)->UseRealTime();

// The kernel both sides of the pool comparison run: the same program, the
// same 16-element store, so they differ only in where the cl_kernel comes
// from (this thread's pooled one vs clCreateKernel + clReleaseKernel).
cl_program oneStoreProgram() {
  static const cl_program program = accel::opencl::buildProgram(
      0, "kernel void one(global float* p, float v) { p[get_global_id(0)] = v; }");
  return program;
}

// A DeviceThreadHandlePool of "one" kernels, as the backend pools its fill
// kernels (src/fill_kernels.cpp): each thread reserves its own.
struct OpenClTypeNow {
  operator accel::DeviceType() const {  // NOLINT(google-explicit-constructor)
    return accel::opencl::deviceType();
  }
};
struct OneKernelPool {
  using Handle = cl_kernel;
  static constexpr OpenClTypeNow kDeviceType{};
  static constexpr std::string_view kName = "bench one-store kernels";
  static constexpr bool kSwitchDevice = false;
  static Handle create(accel::DeviceIndex) {
    return clCreateKernel(oneStoreProgram(), "one", nullptr);
  }
  static void destroy(Handle kernel) noexcept { clReleaseKernel(kernel); }
};

void runOne(cl_kernel kernel, cl_command_queue queue, void* out) {
  const float v = 1.0f;
  const std::size_t global = 16;
  clSetKernelArgSVMPointer(kernel, 0, out);
  clSetKernelArg(kernel, 1, sizeof v, &v);
  clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr,
                         nullptr);
  clFinish(queue);
}

void BM_FillKernel_FromPool(benchmark::State& state) {
  if (!openClReady(state)) return;
  accel::AcceleratorHooks& hooks = registerBackend();
  accel::DataPtr data = hooks.getDeviceAllocator(0).allocate(16 * sizeof(float));
  cl_command_queue queue = accel::opencl::nativeQueue(hooks.getDefaultStream(0));
  for (auto _ : state) {
    runOne(accel::reserveHandle<OneKernelPool>(0), queue, data.get());
  }
}
BENCHMARK(BM_FillKernel_FromPool);

void BM_FillKernel_CreatePerCall(benchmark::State& state) {
  if (!openClReady(state)) return;
  accel::AcceleratorHooks& hooks = registerBackend();
  accel::DataPtr data = hooks.getDeviceAllocator(0).allocate(16 * sizeof(float));
  cl_command_queue queue = accel::opencl::nativeQueue(hooks.getDefaultStream(0));
  for (auto _ : state) {
    cl_kernel kernel = clCreateKernel(oneStoreProgram(), "one", nullptr);
    runOne(kernel, queue, data.get());
    clReleaseKernel(kernel);
  }
}
BENCHMARK(BM_FillKernel_CreatePerCall);

// The two above alternated (see PairedTimes): ns per kernel + finish.
void BM_FillKernel_Paired(benchmark::State& state) {
  if (!openClReady(state)) return;
  accel::AcceleratorHooks& hooks = registerBackend();
  accel::DataPtr data = hooks.getDeviceAllocator(0).allocate(16 * sizeof(float));
  cl_command_queue queue = accel::opencl::nativeQueue(hooks.getDefaultStream(0));
  PairedTimes times;
  for (auto _ : state) {
    times.ours.push_back(PairedTimes::time(
        [&] { runOne(accel::reserveHandle<OneKernelPool>(0), queue, data.get()); }));
    times.raw.push_back(PairedTimes::time([&] {
      cl_kernel kernel = clCreateKernel(oneStoreProgram(), "one", nullptr);
      runOne(kernel, queue, data.get());
      clReleaseKernel(kernel);
    }));
  }
  times.report(state, "pool_ns", "create_ns");
}
BENCHMARK(BM_FillKernel_Paired);

}  // namespace

// Host side of the OpenCL fills: validate (with the host fills' own checks),
// claim the stream position, set the thread's own kernel's arguments and
// enqueue it on the stream's queue (or record it, with the position read at
// each replay, while a graph captures the stream).
#include "accel/opencl/fill.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>
#include <utility>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/kit/device_fill_jobs.h"
#include "accel/kit/fill_generator.h"
#include "accel/opencl/opencl.h"
#include "accel/philox_generator.h"
#include "accel/random_fill_elements.h"
#include "captured_philox.h"
#include "devices.h"
#include "fill_kernels.h"
#include "loader.h"
#include "opencl_error.h"
#include "opencl_memory.h"
#include "queue_tails.h"
#include "recording.h"
#include "streams.h"

namespace accel::opencl {
namespace {

using accel::detail::FillJob;
using detail::FillKernel;

// Work-items per work-group: a multiple of every device's preferred size
// that any OpenCL device accepts (the minimum CL_DEVICE_MAX_WORK_GROUP_SIZE
// of a full-profile device is 1; 64 is below every real one).
constexpr std::size_t kWorkGroupSize = 64;

// Work-items of a fill whose first output is Philox word `offset` (fill.cl,
// fill_lanes.cl):
// one per 16 Philox blocks (64 words) for the fills of one word per element,
// one per chunk of 16 outputs' worth of elements for the others.
std::size_t workItems(const FillJob& job, std::uint64_t offset) {
  switch (job.kind) {
    case FillKind::Uint32:
    case FillKind::UniformFloat:
    case FillKind::Bernoulli:
      return (job.count + offset % 4 + 63) / 64;
    default: {
      const auto per = static_cast<std::size_t>(16 / (fillOutputs(job.kind, 2) / 2));
      return (job.count + per - 1) / per;
    }
  }
}

FillKernel kernelOf(const FillJob& job) {
  switch (job.kind) {
    case FillKind::Uint32:
      return FillKernel::Bits32;
    case FillKind::Uint64:
      return FillKernel::Bits64;
    case FillKind::UniformFloat:
      return FillKernel::UniformFloat;
    case FillKind::UniformDouble:
      return FillKernel::UniformDouble;
    case FillKind::NormalFloat:
      return FillKernel::NormalFloat;
    case FillKind::NormalDouble:
      return FillKernel::NormalDouble;
    case FillKind::Bernoulli:
      return job.output == accel::detail::FillOutput::Byte ? FillKernel::BernoulliByte
                                                           : FillKernel::BernoulliFloat;
  }
  return FillKernel::Bits32;
}

// The output must lie in one live allocation of the stream's device (the
// core allocator's block map; a kernel writing elsewhere would corrupt
// memory the driver cannot check).
void checkOutput(const char* api, const FillJob& job, Stream stream) {
  const std::size_t bytes = job.count * accel::detail::fillElementBytes(job);
  const std::optional<memory::BlockInfo> block =
      detail::deviceCachingAllocator().findBlock(stream.device.index(), job.out);
  const auto begin = reinterpret_cast<std::uintptr_t>(job.out);
  const auto base = reinterpret_cast<std::uintptr_t>(block ? block->base : nullptr);
  if (block && !block->freed && begin - base + bytes <= block->requested) return;
  std::ostringstream text;
  text << api << ": " << job.out << " .. +" << bytes << " bytes is not inside one "
       << "allocation of " << stream.device.str()
       << "; pass memory from the opencl device allocator of the stream's device";
  throw InvalidArgument(text.str());
}

template <typename T>
void setArg(cl_kernel kernel, cl_uint index, const T& value, DeviceIndex device) {
  detail::checkCl(detail::loader().clSetKernelArg(kernel, index, sizeof(T), &value),
                  "clSetKernelArg (a fill)", device);
}

void enqueue(Stream stream, FillJob job, Generator generator) {
  const char* const api = kit::fillApiName(job.kind);
  ACCEL_CHECK(stream.device.type() == deviceType(), InvalidArgument, api, ": ",
              stream.device.str(), " is not an opencl stream");
  detail::requireAvailable();
  AcceleratorHooks& hooks = getHooks(deviceType());
  hooks.checkDeviceIndex(stream.device.index());
  const DeviceIndex device = stream.device.index();
  const cl_command_queue queue = detail::nativeQueue(stream);  // refuses unknown ids
  const bool isDouble =
      job.kind == FillKind::UniformDouble || job.kind == FillKind::NormalDouble;
  ACCEL_CHECK(!isDouble || detail::deviceRecord(device).info.fp64, NotSupported, api,
              ": ", detail::deviceLabel(device),
              " has no double precision (cl_khr_fp64); fill float instead");
  if (job.count > 0) checkOutput(api, job, stream);
  // Build (or reserve) the kernels before claiming the stream: a build that
  // fails consumes nothing.
  detail::FillKernels& kernels = detail::reserveFillKernels(device);
  generator = kit::fillGenerator(api, stream, std::move(generator));
  const std::uint64_t outputs = fillOutputs(job.kind, job.count);
  // A captured fill reads its position at each replay (captured_philox.h);
  // any other claims it now, in program order.
  const std::shared_ptr<detail::Recording> recording = detail::recordingOf(stream);
  std::optional<kit::CapturedPhilox::Position> captured;
  PhiloxPosition from{};
  if (recording) {
    if (job.count == 0) return;  // nothing to record, nothing drawn
    captured =
        detail::claimCapturedPhilox(recording->philox(), generator, outputs, stream);
  } else {
    from = reservePhilox(generator, outputs);
    if (job.count == 0) return;
  }
  const cl_kernel kernel =
      captured ? kernels.getCaptured(kernelOf(job)) : kernels.get(kernelOf(job));
  const cl_ulong count = job.count;
  detail::checkCl(detail::loader().clSetKernelArgSVMPointer(kernel, 0, job.out),
                  "clSetKernelArgSVMPointer (a fill)", device);
  setArg(kernel, 1, count, device);
  if (captured) {
    detail::checkCl(detail::loader().clSetKernelArgSVMPointer(kernel, 2, captured->slot),
                    "clSetKernelArgSVMPointer (a captured fill's Philox position)",
                    device);
    setArg(kernel, 3, cl_ulong{captured->offset}, device);
  } else {
    setArg(kernel, 2, cl_ulong{from.seed}, device);
    setArg(kernel, 3, cl_ulong{from.offset}, device);
  }
  switch (job.kind) {
    case FillKind::UniformFloat:
      setArg(kernel, 4, cl_int{job.ranged ? 1 : 0}, device);
      setArg(kernel, 5, static_cast<cl_float>(job.low), device);
      setArg(kernel, 6, static_cast<cl_float>(job.range), device);
      setArg(kernel, 7, static_cast<cl_float>(job.belowHigh), device);
      break;
    case FillKind::UniformDouble:
      setArg(kernel, 4, cl_int{job.ranged ? 1 : 0}, device);
      setArg(kernel, 5, cl_double{job.low}, device);
      setArg(kernel, 6, cl_double{job.range}, device);
      setArg(kernel, 7, cl_double{job.belowHigh}, device);
      break;
    case FillKind::NormalFloat:
      setArg(kernel, 4, static_cast<cl_float>(job.mean), device);
      setArg(kernel, 5, static_cast<cl_float>(job.stddev), device);
      break;
    case FillKind::NormalDouble:
      setArg(kernel, 4, cl_double{job.mean}, device);
      setArg(kernel, 5, cl_double{job.stddev}, device);
      break;
    case FillKind::Bernoulli:
      setArg(kernel, 4, cl_ulong{job.threshold}, device);
      break;
    default:
      break;
  }
  // A captured fill's first output is known only at replay: enough
  // work-items for any offset % 4 (those past the end write nothing).
  const std::size_t items = workItems(job, captured ? 3 : from.offset);
  const std::size_t global =
      (items + kWorkGroupSize - 1) / kWorkGroupSize * kWorkGroupSize;
  const std::size_t local = kWorkGroupSize;
  if (recording) {
    recording->addKernel(kernel, global, local, api);
    return;
  }
  const cl_int status = detail::queueTail(queue).enqueue([&](cl_event* done) {
    return detail::loader().clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global,
                                                   &local, 0, nullptr, done);
  });
  if (status != CL_SUCCESS) {  // the message is built only when it is needed
    detail::checkCl(status, std::string("clEnqueueNDRangeKernel (") + api + ")", device);
  }
  (void)detail::loader().clFlush(queue);
}

}  // namespace

void fillBits(Stream stream, std::uint32_t* data, std::size_t count,
              Generator generator) {
  enqueue(stream, kit::bitsFillJob(data, count), std::move(generator));
}
void fillBits(Stream stream, std::uint64_t* data, std::size_t count,
              Generator generator) {
  enqueue(stream, kit::bitsFillJob(data, count), std::move(generator));
}
void fillUniform(Stream stream, float* data, std::size_t count, float low, float high,
                 Generator generator) {
  enqueue(stream, kit::uniformFillJob(data, count, low, high), std::move(generator));
}
void fillUniform(Stream stream, double* data, std::size_t count, double low, double high,
                 Generator generator) {
  enqueue(stream, kit::uniformFillJob(data, count, low, high), std::move(generator));
}
void fillNormal(Stream stream, float* data, std::size_t count, float mean, float stddev,
                Generator generator) {
  enqueue(stream, kit::normalFillJob(data, count, mean, stddev), std::move(generator));
}
void fillNormal(Stream stream, double* data, std::size_t count, double mean,
                double stddev, Generator generator) {
  enqueue(stream, kit::normalFillJob(data, count, mean, stddev), std::move(generator));
}
void fillBernoulli(Stream stream, std::uint8_t* data, std::size_t count, double p,
                   Generator generator) {
  enqueue(stream, kit::bernoulliFillJob(data, count, p), std::move(generator));
}
void fillBernoulli(Stream stream, float* data, std::size_t count, double p,
                   Generator generator) {
  enqueue(stream, kit::bernoulliFillJob(data, count, p), std::move(generator));
}

}  // namespace accel::opencl

#include "device_fill.h"

#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "accel/adapter/fill_jobs.h"
#include "accel/random_fill.h"
#include "devices.h"
#include "fill_kernels.h"
#include "loader.h"
#include "opencl_backend.h"
#include "opencl_error.h"
#include "queue_tails.h"
#include "recording.h"
#include "streams.h"

namespace accel::opencl::detail {
namespace {

// Work-items per work-group: a multiple of every device's preferred size
// that any OpenCL device accepts (the minimum CL_DEVICE_MAX_WORK_GROUP_SIZE
// of a full-profile device is 1; 64 is below every real one).
constexpr std::size_t kWorkGroupSize = 64;

// The kernel of a kind, its element size, and whether it draws one 32-bit
// word per element (the hand-vectorised kernels of fill_lanes.cl).
struct KindInfo {
  FillKernel kernel;
  std::size_t element_bytes;
  bool one_word;
  bool fp64;
};

KindInfo kindInfo(std::string_view api, std::int32_t kind) {
  switch (kind) {
    case ACCEL_FILL_BITS32:
      return {FillKernel::Bits32, 4, true, false};
    case ACCEL_FILL_BITS64:
      return {FillKernel::Bits64, 8, false, false};
    case ACCEL_FILL_UNIFORM_FLOAT:
      return {FillKernel::UniformFloat, 4, true, false};
    case ACCEL_FILL_UNIFORM_DOUBLE:
      return {FillKernel::UniformDouble, 8, false, true};
    case ACCEL_FILL_NORMAL_FLOAT:
      return {FillKernel::NormalFloat, 4, false, false};
    case ACCEL_FILL_NORMAL_DOUBLE:
      return {FillKernel::NormalDouble, 8, false, true};
    case ACCEL_FILL_BERNOULLI_U8:
      return {FillKernel::BernoulliByte, 1, true, false};
    case ACCEL_FILL_BERNOULLI_FLOAT:
      return {FillKernel::BernoulliFloat, 4, true, false};
    default:
      throw InvalidArgument(
          concat(api, ": the opencl backend has no fill of kind ", kind));
  }
}

// Work-items of a fill whose first output is Philox word `offset` (fill.cl,
// fill_lanes.cl): one per 16 Philox blocks (64 words) for the fills of one
// word per element, one per chunk of 16 outputs' worth of elements for the
// others.
std::size_t workItems(const adapter::Core& core, std::int32_t kind, const KindInfo& info,
                      std::uint64_t count, std::uint64_t offset) {
  if (info.one_word) return static_cast<std::size_t>((count + offset % 4 + 63) / 64);
  const auto per = static_cast<std::uint64_t>(16 / (core.fillOutputs(kind, 2) / 2));
  return static_cast<std::size_t>((count + per - 1) / per);
}

// The output must lie in one live allocation of the stream's device.
void checkOutput(const adapter::Core& core, std::string_view api, const void* data,
                 std::uint64_t bytes, Stream stream) {
  // A lookup, not a refusal: the core keeps no message for this thread.
  const adapter::BlockLookup found = core.useBlock(data);
  const adapter::Block& block = found.block;
  const auto begin = reinterpret_cast<std::uintptr_t>(data);
  const auto base = reinterpret_cast<std::uintptr_t>(block.base);
  if (found.state == ACCEL_BLOCK_LIVE && block.device == stream.device &&
      begin - base + bytes <= block.bytes)
    return;
  throw InvalidArgument(concat(api, ": ", data, " .. +", bytes,
                               " bytes is not inside one allocation of ",
                               DeviceName{stream.device},
                               "; pass memory from the opencl device allocator of the "
                               "stream's device"));
}

template <typename T>
void setArg(cl_kernel kernel, cl_uint index, const T& value, DeviceIndex device) {
  checkCl(loader().clSetKernelArg(kernel, index, sizeof(T), &value),
          "clSetKernelArg (a fill)", device);
}

// The uniform mapping's parameters in the element type (the host fill's,
// accel/adapter/fill_jobs.h).
template <typename T>
void setUniformArgs(cl_kernel kernel, double a, double b, DeviceIndex device) {
  const adapter::UniformMapping<T> m =
      adapter::deviceUniform(static_cast<T>(a), static_cast<T>(b));
  setArg(kernel, 4, cl_int{m.ranged ? 1 : 0}, device);
  setArg(kernel, 5, m.low, device);
  setArg(kernel, 6, m.range, device);
  setArg(kernel, 7, m.below_high, device);
}

}  // namespace

void enqueueFill(const adapter::Core& core, std::string_view api, Stream stream,
                 std::int32_t kind, void* data, std::uint64_t count, double a, double b,
                 accel_generator* generator) {
  const KindInfo info = kindInfo(api, kind);
  // The parameters are checked by the core's fill itself, on an empty
  // output, so that device and host accept exactly the same values.
  core.fillHost(kind, nullptr, 0, a, b, {});
  const DeviceIndex device = stream.device;
  const cl_command_queue queue = nativeQueue(stream);  // refuses unknown ids
  ACCEL_ADAPTER_CHECK(!info.fp64 || deviceRecord(device).info.fp64, NotSupported, api,
                      ": ", deviceLabel(device),
                      " has no double precision (cl_khr_fp64); fill float instead");
  ACCEL_ADAPTER_CHECK(
      count <= std::numeric_limits<std::uint64_t>::max() / info.element_bytes,
      InvalidArgument, api, "(): ", count, " elements do not fit in memory");
  if (count > 0) checkOutput(core, api, data, count * info.element_bytes, stream);
  // The kernels are built (or borrowed) before anything is drawn: a build
  // that fails consumes nothing.
  const BorrowedFillKernels borrowed(device);
  if (generator == nullptr) generator = core.defaultGenerator(device);
  const std::uint64_t outputs = core.fillOutputs(kind, count);
  // A captured fill reads its position at each replay (recording.h); any
  // other claims it now, in program order.
  const std::shared_ptr<Recording> recording = recordingOf(stream);
  std::optional<Recording::Slot> slot;
  adapter::PhiloxPosition from;
  if (recording) {
    if (count == 0) return;  // nothing to record, nothing drawn
    slot = recording->claimSlot(generator, outputs);
  } else {
    from = core.reservePhilox(generator, outputs);
    if (count == 0) return;
  }
  try {
    const cl_kernel kernel = slot ? borrowed.kernels().getCaptured(info.kernel)
                                  : borrowed.kernels().get(info.kernel);
    checkCl(loader().clSetKernelArgSVMPointer(kernel, 0, data),
            "clSetKernelArgSVMPointer (a fill)", device);
    setArg(kernel, 1, cl_ulong{count}, device);
    if (slot) {
      // Each captured fill has a slot of its own: its offset in it is 0.
      checkCl(loader().clSetKernelArgSVMPointer(kernel, 2, slot->device),
              "clSetKernelArgSVMPointer (a captured fill's Philox position)", device);
      setArg(kernel, 3, cl_ulong{0}, device);
    } else {
      setArg(kernel, 2, cl_ulong{from.seed}, device);
      setArg(kernel, 3, cl_ulong{from.offset}, device);
    }
    switch (kind) {
      case ACCEL_FILL_UNIFORM_FLOAT:
        setUniformArgs<cl_float>(kernel, a, b, device);
        break;
      case ACCEL_FILL_UNIFORM_DOUBLE:
        setUniformArgs<cl_double>(kernel, a, b, device);
        break;
      case ACCEL_FILL_NORMAL_FLOAT:
        setArg(kernel, 4, static_cast<cl_float>(a), device);
        setArg(kernel, 5, static_cast<cl_float>(b), device);
        break;
      case ACCEL_FILL_NORMAL_DOUBLE:
        setArg(kernel, 4, cl_double{a}, device);
        setArg(kernel, 5, cl_double{b}, device);
        break;
      case ACCEL_FILL_BERNOULLI_U8:
      case ACCEL_FILL_BERNOULLI_FLOAT:
        setArg(kernel, 4, cl_ulong{adapter::bernoulliThreshold(a)}, device);
        break;
      default:
        break;
    }
    // A captured fill's first output is known only at replay: enough
    // work-items for any offset % 4 (those past the end write nothing).
    const std::size_t items = workItems(core, kind, info, count, slot ? 3 : from.offset);
    const std::size_t global =
        (items + kWorkGroupSize - 1) / kWorkGroupSize * kWorkGroupSize;
    const std::size_t local = kWorkGroupSize;
    if (recording) {
      recording->addKernel(kernel, global, local, api);
      return;
    }
    const cl_int status = queueTail(queue).enqueue([&](cl_event* done) {
      return loader().clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local,
                                             0, nullptr, done);
    });
    if (status != CL_SUCCESS) {  // the message is built only when it is needed
      checkCl(status, concat("clEnqueueNDRangeKernel (", api, ")"), device);
    }
    (void)loader().clFlush(queue);
  } catch (...) {
    if (slot) recording->unclaimSlot(*slot);  // not in the graph: no draw at replays
    throw;
  }
}

void OpenClBackend::fill(Stream stream, std::int32_t kind, void* data,
                         std::uint64_t count, double a, double b,
                         accel_generator* generator) {
  requireAvailable();
  (void)deviceRecord(stream.device);
  const char* api =
      kind == ACCEL_FILL_BITS32 || kind == ACCEL_FILL_BITS64 ? "fillBits"
      : kind == ACCEL_FILL_UNIFORM_FLOAT || kind == ACCEL_FILL_UNIFORM_DOUBLE
          ? "fillUniform"
      : kind == ACCEL_FILL_NORMAL_FLOAT || kind == ACCEL_FILL_NORMAL_DOUBLE
          ? "fillNormal"
          : "fillBernoulli";
  enqueueFill(core(), api, stream, kind, data, count, a, b, generator);
}

}  // namespace accel::opencl::detail

// The plugin's side of the CUDA fills (extension::fill): the job built with
// the host fills' own checks, the stream position claimed (or, captured,
// read by the kernel at each replay), the kernel launched.
#include "device_fill.h"

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/kit/device_fill_jobs.h"
#include "accel/random_fill_elements.h"
#include "captured_philox.h"
#include "cuda_error.h"
#include "cuda_hooks.h"
#include "current_device.h"
#include "fill_kernels.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

using accel::detail::FillJob;

// The job of a fill of `kind` (ACCEL_FILL_*), with the host fills' checks.
FillJob jobOf(std::string_view api, std::int32_t kind, void* data, std::uint64_t count,
              double a, double b) {
  const auto n = static_cast<std::size_t>(count);
  switch (kind) {
    case ACCEL_FILL_BITS32:
      return kit::bitsFillJob(static_cast<std::uint32_t*>(data), n);
    case ACCEL_FILL_BITS64:
      return kit::bitsFillJob(static_cast<std::uint64_t*>(data), n);
    case ACCEL_FILL_UNIFORM_FLOAT:
      return kit::uniformFillJob(static_cast<float*>(data), n, static_cast<float>(a),
                                 static_cast<float>(b));
    case ACCEL_FILL_UNIFORM_DOUBLE:
      return kit::uniformFillJob(static_cast<double*>(data), n, a, b);
    case ACCEL_FILL_NORMAL_FLOAT:
      return kit::normalFillJob(static_cast<float*>(data), n, static_cast<float>(a),
                                static_cast<float>(b));
    case ACCEL_FILL_NORMAL_DOUBLE:
      return kit::normalFillJob(static_cast<double*>(data), n, a, b);
    case ACCEL_FILL_BERNOULLI_U8:
      return kit::bernoulliFillJob(static_cast<std::uint8_t*>(data), n, a);
    case ACCEL_FILL_BERNOULLI_FLOAT:
      return kit::bernoulliFillJob(static_cast<float*>(data), n, a);
    default:
      throw InvalidArgument(
          accel::detail::concat(api, ": the cuda backend cannot fill kind ", kind,
                                "; pass an ACCEL_FILL_* kind of accel/plugin_abi.h"));
  }
}

}  // namespace

void fill(std::string_view api, accel_stream stream, std::int32_t kind, void* data,
          std::uint64_t count, double a, double b, accel_generator* generator) {
  FillJob job = jobOf(api, kind, data, count, a, b);
  requireAvailable();
  AcceleratorHooks& hooks = getHooks(DeviceType::CUDA);
  hooks.checkDeviceIndex(stream.device);
  const Stream s(Device(DeviceType::CUDA, stream.device), stream.id);
  const cudaStream_t native = nativeStream(s);  // refuses unknown ids first
  // The core's handle of a generator is its Generator (accel/plugin_status.h).
  const Generator& drawn = generator != nullptr
                               ? *reinterpret_cast<const Generator*>(generator)
                               : hooks.getDefaultGenerator(stream.device);
  DeviceContext context(stream.device);
  // Outside a capture the position is claimed now; inside one of the
  // backend's captures the kernel reads it at each replay (captured_philox.h).
  const std::uint64_t* replayPosition = claimFillPosition(
      native, s, drawn, fillOutputs(job.kind, job.count), &job.seed, &job.offset);
  checkCuda(launchFill(job, replayPosition, native), api);
}

}  // namespace accel::cuda::detail

// The CUDA device fill (device_fill.h): the job's parameters computed as the
// host fill's (accel/adapter/fill_jobs.h), the stream position claimed (or,
// captured, read by the kernel at each replay), the kernel launched.
#include "device_fill.h"

#include "accel/adapter/fill_jobs.h"
#include "accel/plugin_abi.h"
#include "accel/random_fill_elements.h"
#include "captured_fills.h"
#include "cuda_error.h"
#include "current_device.h"
#include "fill_kernels.h"
#include "streams.h"

namespace accel::cuda::detail {
namespace {

using accel::detail::FillJob;
using accel::detail::FillOutput;

// What the kernel writes for `kind` (ACCEL_FILL_*, checked by the core).
FillJob jobOf(std::int32_t kind, void* data, std::size_t count, double a, double b) {
  FillJob job;
  job.out = data;
  job.count = count;
  switch (kind) {
    case ACCEL_FILL_BITS32:
      job.kind = FillKind::Uint32;
      break;
    case ACCEL_FILL_BITS64:
      job.kind = FillKind::Uint64;
      break;
    case ACCEL_FILL_UNIFORM_FLOAT:
      job.kind = FillKind::UniformFloat;
      break;
    case ACCEL_FILL_UNIFORM_DOUBLE:
      job.kind = FillKind::UniformDouble;
      break;
    case ACCEL_FILL_NORMAL_FLOAT:
      job.kind = FillKind::NormalFloat;
      break;
    case ACCEL_FILL_NORMAL_DOUBLE:
      job.kind = FillKind::NormalDouble;
      break;
    default:  // ACCEL_FILL_BERNOULLI_U8, ACCEL_FILL_BERNOULLI_FLOAT
      job.kind = FillKind::Bernoulli;
      job.output = kind == ACCEL_FILL_BERNOULLI_U8 ? FillOutput::Byte : FillOutput::Float;
      break;
  }
  const adapter::FillParameters p = adapter::fillParameters(kind, a, b);
  job.ranged = p.uniform.ranged;
  job.low = p.uniform.low;
  job.range = p.uniform.range;
  job.belowHigh = p.uniform.below_high;
  job.mean = p.mean;
  job.stddev = p.stddev;
  job.threshold = p.threshold;
  return job;
}

}  // namespace

void fill(const adapter::Core& core, adapter::Stream stream, std::int32_t kind,
          void* data, std::size_t count, double a, double b, accel_generator* generator) {
  FillJob job = jobOf(kind, data, count, a, b);
  const cudaStream_t native = nativeStream(stream);  // refuses unknown ids first
  DeviceContext context(stream.device);
  // Outside a capture the position is claimed now; inside one of the
  // backend's captures the kernel reads it at each replay (captured_fills.h).
  adapter::PhiloxPosition from;
  const std::uint64_t* replayPosition = claimFillPosition(
      core, native, stream, generator, fillOutputs(job.kind, job.count), &from);
  job.seed = from.seed;
  job.offset = from.offset;
  checkCuda(launchFill(job, replayPosition, native), "a fill's kernel launch");
}

}  // namespace accel::cuda::detail

// Host side of the CUDA fills: validate (with the host fills' own checks),
// claim the stream position, launch.
#include "accel/cuda/fill.h"

#include <utility>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/kit/device_fill_jobs.h"
#include "accel/kit/fill_generator.h"
#include "accel/philox_generator.h"
#include "accel/random_fill_elements.h"
#include "captured_philox.h"
#include "cuda_error.h"
#include "cuda_hooks.h"
#include "current_device.h"
#include "fill_kernels.h"
#include "streams.h"

namespace accel::cuda {
namespace {

using accel::detail::FillJob;

void enqueue(Stream stream, FillJob job, Generator generator) {
  const char* const api = kit::fillApiName(job.kind);
  ACCEL_CHECK(stream.device.type() == DeviceType::CUDA, InvalidArgument, api, ": ",
              stream.device.str(), " is not a cuda stream");
  detail::requireAvailable();
  AcceleratorHooks& hooks = getHooks(DeviceType::CUDA);
  hooks.checkDeviceIndex(stream.device.index());
  const cudaStream_t native = detail::nativeStream(stream);  // refuses unknown ids first
  generator = kit::fillGenerator(api, stream, std::move(generator));
  detail::DeviceContext context(stream.device.index());
  // Outside a capture the position is claimed now; inside one of the
  // backend's captures the kernel reads it at each replay (captured_philox.h).
  const std::uint64_t* replayPosition =
      detail::claimFillPosition(native, stream, generator,
                                fillOutputs(job.kind, job.count), &job.seed, &job.offset);
  detail::checkCuda(detail::launchFill(job, replayPosition, native), api);
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

}  // namespace accel::cuda

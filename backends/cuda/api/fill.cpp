// The CUDA fills (accel/cuda/fill.h): the stream and generator checked and
// named here, the fill enqueued by the plugin (extension::fill, the shape of
// the plugin API's device fill).
#include "accel/cuda/fill.h"

#include <utility>

#include "accel/kit/fill_generator.h"
#include "plugin_calls.h"

namespace accel::cuda {
namespace {

void fill(const char* api, Stream stream, std::int32_t kind, void* data,
          std::size_t count, double a, double b, Generator generator) {
  const accel_stream s = api::pluginStream(stream, api);
  // The stream's device's default generator when none is given.
  generator = kit::fillGenerator(api, stream, std::move(generator));
  api::check(
      extension::fill(api, s, kind, data, count, a, b, pluginGeneratorHandle(generator)),
      api);
}

}  // namespace

void fillBits(Stream stream, std::uint32_t* data, std::size_t count,
              Generator generator) {
  fill("fillBits", stream, ACCEL_FILL_BITS32, data, count, 0, 0, std::move(generator));
}
void fillBits(Stream stream, std::uint64_t* data, std::size_t count,
              Generator generator) {
  fill("fillBits", stream, ACCEL_FILL_BITS64, data, count, 0, 0, std::move(generator));
}

void fillUniform(Stream stream, float* data, std::size_t count, float low, float high,
                 Generator generator) {
  fill("fillUniform", stream, ACCEL_FILL_UNIFORM_FLOAT, data, count, low, high,
       std::move(generator));
}
void fillUniform(Stream stream, double* data, std::size_t count, double low, double high,
                 Generator generator) {
  fill("fillUniform", stream, ACCEL_FILL_UNIFORM_DOUBLE, data, count, low, high,
       std::move(generator));
}

void fillNormal(Stream stream, float* data, std::size_t count, float mean, float stddev,
                Generator generator) {
  fill("fillNormal", stream, ACCEL_FILL_NORMAL_FLOAT, data, count, mean, stddev,
       std::move(generator));
}
void fillNormal(Stream stream, double* data, std::size_t count, double mean,
                double stddev, Generator generator) {
  fill("fillNormal", stream, ACCEL_FILL_NORMAL_DOUBLE, data, count, mean, stddev,
       std::move(generator));
}

void fillBernoulli(Stream stream, std::uint8_t* data, std::size_t count, double p,
                   Generator generator) {
  fill("fillBernoulli", stream, ACCEL_FILL_BERNOULLI_U8, data, count, p, 0,
       std::move(generator));
}
void fillBernoulli(Stream stream, float* data, std::size_t count, double p,
                   Generator generator) {
  fill("fillBernoulli", stream, ACCEL_FILL_BERNOULLI_FLOAT, data, count, p, 0,
       std::move(generator));
}

}  // namespace accel::cuda

// openreg's random fills (accel/openreg/fill.h): the generator checked and
// named here, the fill enqueued by the plugin with the core's reference fill.
#include "accel/openreg/fill.h"

#include <type_traits>
#include <utility>

#include "accel/kit/fill_generator.h"
#include "plugin_calls.h"

namespace accel::openreg {
namespace {

template <bool kNormal, typename Real>
void fill(Stream stream, Real* data, std::size_t count, Real a, Real b,
          Generator generator) {
  constexpr bool kFloat = std::is_same_v<Real, float>;
  constexpr std::int32_t kKind =
      kNormal ? (kFloat ? ACCEL_FILL_NORMAL_FLOAT : ACCEL_FILL_NORMAL_DOUBLE)
              : (kFloat ? ACCEL_FILL_UNIFORM_FLOAT : ACCEL_FILL_UNIFORM_DOUBLE);
  const char* api = kNormal ? "fillNormal" : "fillUniform";
  api::ensureInitialized();
  const accel_stream s = api::pluginStream(stream, api);
  // The stream's device's default generator when none is given; the
  // plugin keeps the one passed for as long as a captured fill needs it.
  generator = kit::fillGenerator(api, stream, std::move(generator));
  api::check(
      extension::fill(api, s, kKind, data, count, a, b, pluginGeneratorHandle(generator)),
      api);
}

}  // namespace

void fillUniform(Stream stream, float* data, std::size_t count, float low, float high,
                 Generator generator) {
  fill<false>(stream, data, count, low, high, std::move(generator));
}

void fillUniform(Stream stream, double* data, std::size_t count, double low, double high,
                 Generator generator) {
  fill<false>(stream, data, count, low, high, std::move(generator));
}

void fillNormal(Stream stream, float* data, std::size_t count, float mean, float stddev,
                Generator generator) {
  fill<true>(stream, data, count, mean, stddev, std::move(generator));
}

void fillNormal(Stream stream, double* data, std::size_t count, double mean,
                double stddev, Generator generator) {
  fill<true>(stream, data, count, mean, stddev, std::move(generator));
}

}  // namespace accel::openreg

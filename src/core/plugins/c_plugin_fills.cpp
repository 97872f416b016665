// The ACCEL_FILL_* kinds of the plugin ABI onto the core's reference fills
// (accel/random_fill.h): what fill_outputs and fill_host serve.
#include <cstdint>
#include <optional>
#include <span>

#include "accel/error.h"
#include "accel/random_fill.h"
#include "plugins/c_plugin_hooks.h"

namespace accel::detail {
namespace {

std::optional<FillKind> fillKindOf(std::int32_t kind) noexcept {
  switch (kind) {
    case ACCEL_FILL_BITS32:
      return FillKind::Uint32;
    case ACCEL_FILL_BITS64:
      return FillKind::Uint64;
    case ACCEL_FILL_UNIFORM_FLOAT:
      return FillKind::UniformFloat;
    case ACCEL_FILL_UNIFORM_DOUBLE:
      return FillKind::UniformDouble;
    case ACCEL_FILL_NORMAL_FLOAT:
      return FillKind::NormalFloat;
    case ACCEL_FILL_NORMAL_DOUBLE:
      return FillKind::NormalDouble;
    case ACCEL_FILL_BERNOULLI_U8:
    case ACCEL_FILL_BERNOULLI_FLOAT:
      return FillKind::Bernoulli;
    default:
      return std::nullopt;
  }
}

template <typename T>
std::span<T> elements(void* data, std::uint64_t count) {
  return {static_cast<T*>(data), static_cast<std::size_t>(count)};
}

}  // namespace

std::uint64_t philoxOutputsOfFill(std::int32_t kind, std::uint64_t count) noexcept {
  const std::optional<FillKind> known = fillKindOf(kind);
  return known ? fillOutputs(*known, count) : 0;
}

void fillHostByKind(std::int32_t kind, void* data, std::uint64_t count, double a,
                    double b, PhiloxPosition from) {
  switch (kind) {
    case ACCEL_FILL_BITS32:
      return fillBits(elements<std::uint32_t>(data, count), from);
    case ACCEL_FILL_BITS64:
      return fillBits(elements<std::uint64_t>(data, count), from);
    case ACCEL_FILL_UNIFORM_FLOAT:
      return fillUniform(elements<float>(data, count), static_cast<float>(a),
                         static_cast<float>(b), from);
    case ACCEL_FILL_UNIFORM_DOUBLE:
      return fillUniform(elements<double>(data, count), a, b, from);
    case ACCEL_FILL_NORMAL_FLOAT:
      return fillNormal(elements<float>(data, count), static_cast<float>(a),
                        static_cast<float>(b), from);
    case ACCEL_FILL_NORMAL_DOUBLE:
      return fillNormal(elements<double>(data, count), a, b, from);
    case ACCEL_FILL_BERNOULLI_U8:
      return fillBernoulli(elements<std::uint8_t>(data, count), a, from);
    case ACCEL_FILL_BERNOULLI_FLOAT:
      return fillBernoulli(elements<float>(data, count), a, from);
    default:
      throw InvalidArgument(concat("fill_host: ", kind,
                                   " is not a fill kind; pass one of the ACCEL_FILL_* "
                                   "kinds of accel/plugin_abi.h"));
  }
}

}  // namespace accel::detail

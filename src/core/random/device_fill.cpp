// Device fills (accel/device_fill.h): the public functions, which hand the
// fill to the hooks of the stream's device type, and the kinds onto the
// core's reference host fills (random/device_fill_host.h).
#include "accel/device_fill.h"

#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "accel/adapter/fill_jobs.h"
#include "accel/error.h"
#include "accel/hooks.h"
#include "accel/hooks_table.h"
#include "accel/random_fill.h"
#include "random/device_fill_host.h"

namespace accel::detail {
namespace {

std::optional<FillKind> fillKindOf(std::int32_t kind) noexcept {
  switch (static_cast<DeviceFill>(kind)) {
    case DeviceFill::Bits32:
      return FillKind::Uint32;
    case DeviceFill::Bits64:
      return FillKind::Uint64;
    case DeviceFill::UniformFloat:
      return FillKind::UniformFloat;
    case DeviceFill::UniformDouble:
      return FillKind::UniformDouble;
    case DeviceFill::NormalFloat:
      return FillKind::NormalFloat;
    case DeviceFill::NormalDouble:
      return FillKind::NormalDouble;
    case DeviceFill::BernoulliU8:
    case DeviceFill::BernoulliFloat:
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
  switch (static_cast<DeviceFill>(kind)) {
    case DeviceFill::Bits32:
      return fillBits(elements<std::uint32_t>(data, count), from);
    case DeviceFill::Bits64:
      return fillBits(elements<std::uint64_t>(data, count), from);
    case DeviceFill::UniformFloat:
      return fillUniform(elements<float>(data, count), static_cast<float>(a),
                         static_cast<float>(b), from);
    case DeviceFill::UniformDouble:
      return fillUniform(elements<double>(data, count), a, b, from);
    case DeviceFill::NormalFloat:
      return fillNormal(elements<float>(data, count), static_cast<float>(a),
                        static_cast<float>(b), from);
    case DeviceFill::NormalDouble:
      return fillNormal(elements<double>(data, count), a, b, from);
    case DeviceFill::BernoulliU8:
      return fillBernoulli(elements<std::uint8_t>(data, count), a, from);
    case DeviceFill::BernoulliFloat:
      return fillBernoulli(elements<float>(data, count), a, from);
    default:
      break;
  }
  throw InvalidArgument(concat("fill_host: ", kind,
                               " is not a fill kind; pass one of the ACCEL_FILL_* "
                               "kinds of accel/plugin_abi.h"));
}

}  // namespace accel::detail

namespace accel {

std::string_view deviceFillApiName(DeviceFill kind) noexcept {
  return adapter::fillApiName(static_cast<std::int32_t>(kind));
}

std::size_t deviceFillElementBytes(DeviceFill kind) noexcept {
  return adapter::fillElementBytes(static_cast<std::int32_t>(kind));
}

std::uint64_t deviceFillOutputs(DeviceFill kind, std::uint64_t count) noexcept {
  return detail::philoxOutputsOfFill(static_cast<std::int32_t>(kind), count);
}

void fillHostReference(DeviceFill kind, void* data, std::size_t count, double a, double b,
                       PhiloxPosition from) {
  detail::fillHostByKind(static_cast<std::int32_t>(kind), data, count, a, b, from);
}

namespace {

void fillOn(Stream stream, DeviceFill kind, void* data, std::size_t count, double a,
            double b, Generator generator) {
  // The host has no backend to ask: say what to call instead.
  ACCEL_CHECK(stream.device.type() != DeviceType::CPU, InvalidArgument,
              deviceFillApiName(kind), "(): ", stream,
              " is a host stream; a device fill needs a stream of a device backend. "
              "Fill host memory with the span overloads of accel/random_fill.h");
  getHooks(stream.device.type())
      .fillRandom(stream, kind, data, count, a, b, std::move(generator));
}

}  // namespace

void fillBits(Stream stream, std::uint32_t* data, std::size_t count,
              Generator generator) {
  fillOn(stream, DeviceFill::Bits32, data, count, 0, 0, std::move(generator));
}
void fillBits(Stream stream, std::uint64_t* data, std::size_t count,
              Generator generator) {
  fillOn(stream, DeviceFill::Bits64, data, count, 0, 0, std::move(generator));
}
void fillUniform(Stream stream, float* data, std::size_t count, float low, float high,
                 Generator generator) {
  fillOn(stream, DeviceFill::UniformFloat, data, count, low, high, std::move(generator));
}
void fillUniform(Stream stream, double* data, std::size_t count, double low, double high,
                 Generator generator) {
  fillOn(stream, DeviceFill::UniformDouble, data, count, low, high, std::move(generator));
}
void fillNormal(Stream stream, float* data, std::size_t count, float mean, float stddev,
                Generator generator) {
  fillOn(stream, DeviceFill::NormalFloat, data, count, mean, stddev,
         std::move(generator));
}
void fillNormal(Stream stream, double* data, std::size_t count, double mean,
                double stddev, Generator generator) {
  fillOn(stream, DeviceFill::NormalDouble, data, count, mean, stddev,
         std::move(generator));
}
void fillBernoulli(Stream stream, std::uint8_t* data, std::size_t count, double p,
                   Generator generator) {
  fillOn(stream, DeviceFill::BernoulliU8, data, count, p, 0, std::move(generator));
}
void fillBernoulli(Stream stream, float* data, std::size_t count, double p,
                   Generator generator) {
  fillOn(stream, DeviceFill::BernoulliFloat, data, count, p, 0, std::move(generator));
}

}  // namespace accel

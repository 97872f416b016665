#include "accel/openreg/fill.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>

#include "accel/error.h"
#include "accel/hooks_table.h"
#include "accel/kit/captured_philox.h"
#include "accel/kit/fill_generator.h"
#include "accel/openreg/backend.h"
#include "accel/philox_generator.h"
#include "accel/random_fill.h"
#include "runtime.h"

namespace accel::openreg {
namespace {

// Enqueues `hostFill(span, position)` on the stream as a kernel over
// data[0, count). The host fill is the one of accel/random_fill.h, so the
// device writes exactly what the host would for the same (seed, offset).
template <typename T, typename HostFill>
void enqueueFill(const char* api, FillKind kind, Stream stream, T* data,
                 std::size_t count, Generator generator, HostFill hostFill) {
  detail::Runtime& rt = detail::readyRuntime(api);
  detail::StreamQueue& queue = rt.queue(stream, api);
  detail::DeviceState& device = rt.device(stream.device.index(), api);
  // The parameters are checked by the host fill itself, on an empty output,
  // so that device and host accept exactly the same values.
  hostFill(std::span<T>(), PhiloxPosition{});
  if (count == 0) return;
  ACCEL_CHECK(count <= std::numeric_limits<std::size_t>::max() / sizeof(T),
              InvalidArgument, api, "(): ", count, " elements do not fit in memory");
  detail::Operation operation;
  operation.name = api;
  operation.buffers.push_back(
      rt.resolveOn(device, data, count * sizeof(T), accel::detail::concat(api, "()")));
  generator = kit::fillGenerator(api, stream, std::move(generator));
  device.faults.beginOperation(api);
  const std::uint64_t outputs = fillOutputs(kind, count);
  if (std::shared_ptr<detail::Capture> capture =
          queue.capturing() ? queue.capture() : nullptr) {
    // Captured: the fill claims nothing now; it reads its position from the
    // (graph, generator) slot, which each replay writes first (graphs.h), so
    // every replay draws new numbers.
    const kit::CapturedPhilox::Position at =
        capture->philox->claim(generator, outputs, [&] {
          // From the capture's private pool (allocations on the capturing
          // stream go there): it lives as long as the graph.
          return device.memory.allocate(kit::CapturedPhilox::kSlotBytes, stream.id);
        });
    operation.buffers.push_back(rt.resolveOn(device, at.slot,
                                             kit::CapturedPhilox::kSlotBytes,
                                             accel::detail::concat(api, "()")));
    operation.body = [data, count, at, hostFill] {
      const PhiloxPosition from{at.slot[0], at.slot[1] + at.offset};
      hostFill(std::span<T>(data, count), from);
    };
    queue.record(capture, std::move(operation));
    return;
  }
  const PhiloxPosition from = reservePhilox(generator, outputs);
  operation.body = [data, count, from, hostFill] {
    hostFill(std::span<T>(data, count), from);
  };
  queue.enqueue(std::move(operation));
}

// Kernels run on one worker thread each: the fill must not start threads of
// its own (the device's parallelism is its execution units).
constexpr FillOptions kKernelFill{FillPath::Auto, 1};

// One body for the four fills: uniform (a, b = low, high) or normal (a, b =
// mean, stddev), of floats or doubles.
template <bool kNormal, typename Real>
void enqueueDistribution(Stream stream, Real* data, std::size_t count, Real a, Real b,
                         Generator generator) {
  constexpr bool kFloat = std::is_same_v<Real, float>;
  constexpr FillKind kKind =
      kNormal ? (kFloat ? FillKind::NormalFloat : FillKind::NormalDouble)
              : (kFloat ? FillKind::UniformFloat : FillKind::UniformDouble);
  enqueueFill(kNormal ? "fillNormal" : "fillUniform", kKind, stream, data, count,
              std::move(generator), [a, b](std::span<Real> out, PhiloxPosition from) {
                if constexpr (kNormal) {
                  accel::fillNormal(out, a, b, from, kKernelFill);
                } else {
                  accel::fillUniform(out, a, b, from, kKernelFill);
                }
              });
}

}  // namespace

void fillUniform(Stream stream, float* data, std::size_t count, float low, float high,
                 Generator generator) {
  enqueueDistribution<false>(stream, data, count, low, high, std::move(generator));
}

void fillUniform(Stream stream, double* data, std::size_t count, double low, double high,
                 Generator generator) {
  enqueueDistribution<false>(stream, data, count, low, high, std::move(generator));
}

void fillNormal(Stream stream, float* data, std::size_t count, float mean, float stddev,
                Generator generator) {
  enqueueDistribution<true>(stream, data, count, mean, stddev, std::move(generator));
}

void fillNormal(Stream stream, double* data, std::size_t count, double mean,
                double stddev, Generator generator) {
  enqueueDistribution<true>(stream, data, count, mean, stddev, std::move(generator));
}

}  // namespace accel::openreg

// The fill group of AcceleratorHooks (accel/device_fill.h): the public
// wrapper and the checks it makes for every backend, and the default of its
// *Impl. The checks are the copies group's where they meet (the stream, the
// range in one live allocation of the core's caches), plus the host fill's
// rules for a and b and the generator's device type, all before the backend
// or the generator is touched: a refused fill consumes nothing.
#include <cstdint>
#include <limits>
#include <utility>

#include "accel/error.h"
#include "accel/hooks.h"
#include "random/device_fill_host.h"

namespace accel {

void AcceleratorHooks::fillRandom(Stream stream, DeviceFill kind, void* data,
                                  std::size_t count, double a, double b,
                                  Generator generator) {
  constexpr HookId hook = HookId::fillRandom;
  requireGroup(hook);
  requireInit(hook);
  checkStream(stream, hook);
  const auto raw_kind = static_cast<std::int32_t>(kind);
  ACCEL_CHECK(detail::philoxOutputsOfFill(raw_kind, 1) != 0, InvalidArgument,
              hookInfo(hook).name, "(): ", raw_kind,
              " is not a DeviceFill kind; pass one of accel/device_fill.h's");
  // With no element, the host fill checks a and b only.
  detail::fillHostByKind(raw_kind, nullptr, 0, a, b, PhiloxPosition{});
  const std::string_view api = deviceFillApiName(kind);
  // A generator of another device type would move that backend's sequence.
  if (!generator.defined()) {
    generator = getDefaultGenerator(stream.device.index());
  } else {
    ACCEL_CHECK(generator.device().type() == deviceType(), InvalidArgument, api,
                "(): the generator is on ", generator.device(), "; a fill on ",
                stream.device, " needs a generator of ", name(), " (",
                hookInfo(HookId::getDefaultGenerator).name, " or ",
                hookInfo(HookId::getNewGenerator).name,
                "), or none for the device's default");
  }
  if (count == 0) return;
  ACCEL_CHECK(data != nullptr, InvalidArgument, api, "(): data is null for a fill of ",
              count, " elements on ", stream);
  const std::size_t element = deviceFillElementBytes(kind);
  ACCEL_CHECK(count <= std::numeric_limits<std::size_t>::max() / element &&
                  reinterpret_cast<std::uintptr_t>(data) <=
                      std::numeric_limits<std::uintptr_t>::max() - (count * element - 1),
              InvalidArgument, api, "(): ", count, " elements of ", element,
              " bytes from ", data, " wrap around the address space");
  const Device device = deviceOfCopyRange(hook, "data", data, count * element);
  ACCEL_CHECK(device == stream.device, InvalidArgument, api, "(): the data (", data,
              ") is memory of ", device, ", but the fill is on ", stream,
              "; fill on a stream of the device that holds the data");
  fillRandomImpl(stream, kind, data, count, a, b, generator);
}

void AcceleratorHooks::fillRandomImpl(Stream, DeviceFill, void*, std::size_t, double,
                                      double, const Generator&) {
  raiseUnsupported(HookId::fillRandom);
}

}  // namespace accel

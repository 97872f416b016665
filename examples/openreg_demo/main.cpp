// openreg_demo: seeds the openreg devices through the context, fills a device
// buffer with uniform floats on a stream, copies it back, switches devices
// with a guard, and shows the memory statistics. The output is the same on
// every run (the numbers come from Philox with seed 42).
#include <cstdio>
#include <exception>
#include <span>
#include <vector>

#include "accel/accel.h"
#include "accel/openreg/openreg.h"
#include "accel/random_fill.h"

namespace {

void printStats(accel::AcceleratorHooks& hooks, accel::DeviceIndex device) {
  const accel::MemoryStats stats = hooks.memoryStats(device);
  std::printf(
      "  openreg:%d  allocated %lld B (peak %lld B), %lld live allocation(s), "
      "%lld device allocation(s) so far\n",
      int(device), static_cast<long long>(stats.allocated_bytes.current),
      static_cast<long long>(stats.allocated_bytes.peak),
      static_cast<long long>(stats.allocations.current),
      static_cast<long long>(stats.num_device_alloc));
}

int run() {
  accel::AcceleratorHooks& hooks = accel::openreg::registerBackend();
  const accel::DeviceType openreg = accel::openreg::deviceType();
  accel::globalContext().lazyInitDevice(openreg);
  const int devices = hooks.deviceCount();
  std::printf(
      "openreg: %d simulated device(s), %s each\n", devices,
      accel::openreg::formatByteSize(hooks.getDeviceProperties(0).total_memory_bytes)
          .c_str());

  // Every default generator of every initialised backend, CPU included.
  accel::globalContext().manualSeed(42);

  // A stream of device 0, a device buffer, and page-locked host memory.
  constexpr std::size_t kCount = 1024;
  const accel::Stream stream = hooks.getNewStream(0);
  accel::DataPtr device_buffer =
      hooks.getDeviceAllocator(0).allocate(kCount * sizeof(float));
  accel::DataPtr host_buffer =
      hooks.getPinnedMemoryAllocator().allocate(kCount * sizeof(float));
  auto* device_values = static_cast<float*>(device_buffer.get());
  auto* host_values = static_cast<float*>(host_buffer.get());

  // Both calls return at once; the stream runs them in order.
  accel::fillUniform(stream, device_values, kCount);
  accel::openreg::copyAsync(host_values, device_values, kCount * sizeof(float), stream);
  hooks.synchronizeStream(stream);

  std::printf("uniform floats filled on %s, first five:",
              accel::Device(openreg, 0).str().c_str());
  for (int i = 0; i < 5; ++i) std::printf(" %.6f", host_values[i]);
  std::printf("\n");

  // The host fill for the same (seed, offset) writes the very same numbers.
  std::vector<float> expected(kCount);
  accel::fillUniform(std::span<float>(expected), accel::PhiloxPosition{42, 0});
  bool same = true;
  for (std::size_t i = 0; i < kCount; ++i) same = same && expected[i] == host_values[i];
  std::printf("same as the host fill for (seed 42, offset 0): %s\n", same ? "yes" : "NO");
  std::printf("device 0's generator now stands at offset %llu\n",
              static_cast<unsigned long long>(hooks.getDefaultGenerator(0).offset()));

  {
    const accel::DeviceIndex other = devices > 1 ? 1 : 0;
    accel::DeviceGuard guard(accel::Device(openreg, other));
    std::printf("inside a DeviceGuard: current device %s\n",
                accel::Device(openreg, hooks.getCurrentDevice()).str().c_str());
    accel::DataPtr scratch = hooks.getDeviceAllocator().allocate(3 * 4096 + 100);
    accel::fillNormal(hooks.getCurrentStream(), static_cast<float*>(scratch.get()), 100);
    float first = 0;
    accel::openreg::copy(&first, scratch.get(), sizeof(float));  // waits for the fill
    std::printf("first normal value on %s: %.6f\n",
                accel::Device(openreg, other).str().c_str(), first);
    std::printf("memory while the guard is active:\n");
    printStats(hooks, other);
  }
  std::printf("after the guard: current device %s\n",
              accel::Device(openreg, hooks.getCurrentDevice()).str().c_str());

  std::printf("memory at the end:\n");
  for (int d = 0; d < devices && d < 2; ++d)
    printStats(hooks, static_cast<accel::DeviceIndex>(d));
  return same ? 0 : 1;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "openreg_demo: %s\n", e.what());
    return 1;
  }
}

// libaccel_testdev_plugin.so: the simulated asynchronous device
// (testdev/testdev_backend.h) as a plugin of the C boundary, written on the
// adapter (accel::adapter::Backend), device type "testdev", for `accel
// check --plugin`. It links nothing of libaccel.so.
//
// Built in variants (the build sets the macros):
//   TESTDEV_TYPE, TESTDEV_DEVICES  the device type and its device count
//   TESTDEV_GROUPS                 the groups it declares (default: all)
//   TESTDEV_KEEPS_CURRENT          the backend keeps the current device and
//                                  streams (Backend::keepsCurrent)
//   TESTDEV_CONTROL                exports the test controls below, for the
//                                  tests of the adapter's asynchronous half
//                                  (tests/conformance/adapter_async_test.cpp)
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "accel/plugin_adapter.h"
#include "testdev/testdev_backend.h"
#ifdef TESTDEV_CONTROL
#include "testdev/testdev_control.h"
#endif

#ifndef TESTDEV_TYPE
#define TESTDEV_TYPE "testdev"
#endif
#ifndef TESTDEV_DEVICES
#define TESTDEV_DEVICES 2
#endif
#ifndef TESTDEV_GROUPS
#define TESTDEV_GROUPS testdev::kAllGroups
#endif

namespace {

testdev::TestdevBackend* g_backend = nullptr;  // registered: lives for the process

void registerTestdev(accel::adapter::Registrar& registrar) {
  testdev::Options options;
  options.devices = TESTDEV_DEVICES;
#ifdef TESTDEV_KEEPS_CURRENT
  options.keeps_current = true;
#endif
  auto backend = std::make_unique<testdev::TestdevBackend>(options);
  testdev::TestdevBackend* registered = backend.get();
  registrar.registerBackend(TESTDEV_TYPE, std::move(backend), TESTDEV_GROUPS);
  g_backend = registered;
}

}  // namespace

ACCEL_DEFINE_PLUGIN_ADAPTER(TESTDEV_TYPE, "0.2.0", registerTestdev);

#ifdef TESTDEV_CONTROL
namespace {

// Runs `body`; a failure's status (a core refusal's included) is returned.
template <typename Body>
accel_status control(Body&& body) noexcept {
  if (g_backend == nullptr) return ACCEL_ERROR_NOT_AVAILABLE;
  try {
    body(*g_backend);
    return ACCEL_OK;
  } catch (const accel::adapter::Failure& failure) {
    return failure.status();
  } catch (...) {
    return ACCEL_ERROR_INTERNAL;
  }
}

}  // namespace

extern "C" {

ACCEL_PLUGIN_EXPORT accel_status testdev_hold_stream(int8_t device, int64_t stream,
                                                     int32_t held) {
  return control([&](testdev::TestdevBackend& b) {
    b.engine().hold(accel::adapter::Stream{stream, device}, held != 0);
  });
}

ACCEL_PLUGIN_EXPORT accel_status testdev_fail_next_synchronize(int32_t failure,
                                                               const char* message) {
  return control([&](testdev::TestdevBackend& b) {
    b.failNextSynchronize([failure, text = std::string(message)]() {
      switch (failure) {
        case TESTDEV_THROW_DEVICE_ERROR:
          throw accel::adapter::DeviceError(text);
        case TESTDEV_THROW_INVALID_ARGUMENT:
          throw accel::adapter::InvalidArgument(text);
        case TESTDEV_THROW_NOT_AVAILABLE:
          throw accel::adapter::NotAvailable(text);
        case TESTDEV_THROW_RUNTIME_ERROR:
          throw std::runtime_error(text);
        case TESTDEV_THROW_BAD_ALLOC:
          throw std::bad_alloc();
        default:
          throw failure;  // not a std::exception
      }
    });
  });
}

ACCEL_PLUGIN_EXPORT accel_status testdev_kept_current(int8_t device,
                                                      int8_t* current_device,
                                                      int64_t* current_stream) {
  return control([&](testdev::TestdevBackend& b) {
    *current_device = b.keptDevice();
    *current_stream = b.keptStream(device);
  });
}

ACCEL_PLUGIN_EXPORT accel_status testdev_find_block(const void* ptr, int8_t* device,
                                                    void** base, size_t* bytes) {
  return control([&](testdev::TestdevBackend& b) {
    const accel::adapter::Block block = b.core().findBlock(ptr);
    *device = block.device;
    *base = block.base;
    *bytes = block.bytes;
  });
}

ACCEL_PLUGIN_EXPORT accel_status testdev_reserve_philox(int8_t device, uint64_t count,
                                                        uint64_t* seed,
                                                        uint64_t* offset) {
  return control([&](testdev::TestdevBackend& b) {
    const accel::adapter::PhiloxPosition p =
        b.core().reservePhilox(b.core().defaultGenerator(device), count);
    *seed = p.seed;
    *offset = p.offset;
  });
}

ACCEL_PLUGIN_EXPORT accel_status testdev_fill_host(int32_t kind, void* data,
                                                   uint64_t count, double a, double b,
                                                   uint64_t seed, uint64_t offset) {
  return control([&](testdev::TestdevBackend& backend) {
    backend.core().fillHost(kind, data, count, a, b, {seed, offset});
  });
}

}  // extern "C"
#endif

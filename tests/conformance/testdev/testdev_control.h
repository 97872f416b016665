/* The test controls a testdev plugin built with TESTDEV_CONTROL exports
 * (testdev_plugin.cpp), for tests that load it and reach into the backend:
 * hold a stream's work, make the next deviceSynchronize throw, read what
 * the backend keeps as current, and call the core's services from inside
 * the plugin (BackendBase::core()). Plain C, looked up with dlsym; each
 * returns an accel_status (ACCEL_OK or the failure's).
 *
 * Thread-safety: as the backend's functions: any thread. */
#ifndef TESTDEV_CONTROL_H
#define TESTDEV_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "accel/plugin_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the next deviceSynchronize throws (testdev_fail_next_synchronize). */
enum testdev_failure {
  TESTDEV_THROW_DEVICE_ERROR = 1,     /* accel::adapter::DeviceError */
  TESTDEV_THROW_INVALID_ARGUMENT = 2, /* accel::adapter::InvalidArgument */
  TESTDEV_THROW_NOT_AVAILABLE = 3,    /* accel::adapter::NotAvailable */
  TESTDEV_THROW_RUNTIME_ERROR = 4,    /* std::runtime_error */
  TESTDEV_THROW_BAD_ALLOC = 5,        /* std::bad_alloc */
  TESTDEV_THROW_NON_STD = 6           /* an int: no std::exception at all */
};

/* While `held` is nonzero, the stream's worker starts no work. */
typedef accel_status (*testdev_hold_stream_fn)(int8_t device, int64_t stream,
                                               int32_t held);
/* The next deviceSynchronize throws `failure` with `message` (copied). */
typedef accel_status (*testdev_fail_next_synchronize_fn)(int32_t failure,
                                                         const char* message);
/* The calling thread's current device and stream of `device` as the
 * backend keeps them (a TESTDEV_KEEPS_CURRENT build). */
typedef accel_status (*testdev_kept_current_fn)(int8_t device, int8_t* current_device,
                                                int64_t* current_stream);
/* Core::findBlock. */
typedef accel_status (*testdev_find_block_fn)(const void* ptr, int8_t* device,
                                              void** base, size_t* bytes);
/* Core::reservePhilox(Core::defaultGenerator(device), count). */
typedef accel_status (*testdev_reserve_philox_fn)(int8_t device, uint64_t count,
                                                  uint64_t* seed, uint64_t* offset);
/* Core::fillHost. */
typedef accel_status (*testdev_fill_host_fn)(int32_t kind, void* data, uint64_t count,
                                             double a, double b, uint64_t seed,
                                             uint64_t offset);

#ifdef __cplusplus
}
#endif

#endif /* TESTDEV_CONTROL_H */

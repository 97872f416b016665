// Fault injection: deterministic device failures for testing error paths.
//
// Frameworks must cope with devices that run out of memory, disappear, or
// are slow. openreg fails on purpose, at a point fixed by a count rather than
// by chance, so that a test reproduces the same failure on every run:
//
//   failNthAllocation(3);       // the 3rd allocation from now: OutOfMemory
//   loseDeviceAfter(1, 10);     // openreg:1 lost after 10 more operations
//   setStreamLatency(s, 200us); // every operation on s starts 200us late
//
// The same faults can be set before start-up through ACCEL_OPENREG_FAIL_ALLOC,
// ACCEL_OPENREG_LOSE_DEVICE and ACCEL_OPENREG_STREAM_LATENCY_US (config.h);
// there the counts run from initialisation.
//
// Operations, for loseDeviceAfter, are what a program submits to a device:
// allocations, copies, kernels, fills, event records and waits, graph
// replays (one each). Once a device is lost, every later call that reaches it
// (those, plus synchronising or querying its streams and events,
// deviceSynchronize, memoryStats, getDeviceProperties) throws DeviceError,
// and work still queued on it is dropped. Frees never throw: the memory of a
// lost device is released silently.
//
// Thread-safety: all functions are thread-safe. Counts are global to the
// process, so concurrent allocating threads share the N-th allocation.
#pragma once

#include <chrono>
#include <cstdint>

#include "accel/device.h"
#include "accel/openreg/export.h"
#include "accel/stream.h"

namespace accel::openreg {

// The `nth` allocation on any openreg device from now (1 = the next one)
// throws OutOfMemory; later ones succeed again. 0 cancels. Never throws
// beyond what initialising the backend throws.
ACCEL_OPENREG_API void failNthAllocation(std::uint64_t nth);

// Device `index` is lost after `operations` more operations (0: at the next
// one). Throws InvalidArgument for a bad index.
ACCEL_OPENREG_API void loseDeviceAfter(DeviceIndex index, std::uint64_t operations);

// True once device `index` has been lost. Throws InvalidArgument for a bad index.
[[nodiscard]] ACCEL_OPENREG_API bool isDeviceLost(DeviceIndex index);

// Each operation on `stream` waits `latency` before it starts (0 removes the
// delay). Throws InvalidArgument for a stream that is not openreg's.
ACCEL_OPENREG_API void setStreamLatency(Stream stream, std::chrono::microseconds latency);

// Cancels every pending fault, removes every stream latency, and brings lost
// devices back (a simulated device reset: allocations made before stay valid,
// work dropped while lost stays dropped). For test suites that share a process.
// Throws only what initialising the backend throws.
ACCEL_OPENREG_API void clearFaults();

}  // namespace accel::openreg

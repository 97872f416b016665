// Execution units: how much work one openreg device runs at once, and in
// which order waiting work gets to run.
//
// Each stream has its own worker thread, but a device has a fixed number of
// execution units (ACCEL_OPENREG_EXECUTION_UNITS, default 4), like the
// multiprocessors of a GPU: a copy, kernel or fill occupies one unit while it
// runs, and when more are ready than there are units, the one from the
// stream with the greatest priority goes first (first come, first served
// within a priority). Event records and waits take no unit. This is what
// stream priorities mean on openreg (streamPriorityRange() is {0, 2}).
//
// Thread-safety: all functions are thread-safe.
#pragma once

#include "accel/device.h"
#include "accel/openreg/export.h"

namespace accel::openreg {

struct ExecutionUnitsState {
  int units = 0;    // configured units
  int busy = 0;     // operations running now
  int waiting = 0;  // operations ready but waiting for a unit
};

// Changes the number of units of device `index` (-1: current) from now on;
// running work is not interrupted. Throws InvalidArgument for a bad index or
// a count outside [1, kMaxExecutionUnits].
ACCEL_OPENREG_API void setExecutionUnits(DeviceIndex index, int units);

// A snapshot of device `index`'s units. Throws InvalidArgument for a bad index.
[[nodiscard]] ACCEL_OPENREG_API ExecutionUnitsState
executionUnitsState(DeviceIndex index);

}  // namespace accel::openreg

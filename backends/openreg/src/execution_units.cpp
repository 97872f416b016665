#include "accel/openreg/execution_units.h"

#include "accel/error.h"
#include "accel/openreg/config.h"
#include "runtime.h"

namespace accel::openreg {
namespace {

DeviceIndex resolve(DeviceIndex index) {
  return index == kCurrentDevice ? detail::threadCurrentDevice() : index;
}

}  // namespace

void setExecutionUnits(DeviceIndex index, int units) {
  detail::Runtime& rt = detail::readyRuntime("setExecutionUnits");
  ACCEL_CHECK(units >= 1 && units <= kMaxExecutionUnits, InvalidArgument,
              "setExecutionUnits(): ", units, " units is outside [1, ",
              kMaxExecutionUnits, "]");
  rt.device(resolve(index), "setExecutionUnits").units.setUnits(units);
}

ExecutionUnitsState executionUnitsState(DeviceIndex index) {
  return detail::readyRuntime("executionUnitsState")
      .device(resolve(index), "executionUnitsState")
      .units.state();
}

}  // namespace accel::openreg

// Umbrella header: the whole openreg C++ API.
#pragma once

#include "accel/device_fill.h"
#include "accel/openreg/backend.h"
#include "accel/openreg/config.h"
#include "accel/openreg/execution_units.h"
#include "accel/openreg/fault_injection.h"
#include "accel/openreg/kernel.h"
#include "accel/openreg/memory.h"

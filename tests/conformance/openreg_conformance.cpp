// The conformance suite on openreg, the reference backend, linked directly.
#include "accel/conformance.h"
#include "accel/openreg/openreg.h"

static const bool kOpenregRegistered = (accel::openreg::registerBackend(), true);
ACCEL_INSTANTIATE_CONFORMANCE(OpenReg, "openreg");

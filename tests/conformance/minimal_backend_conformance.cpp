// The conformance suite on backends that declare only the low and high
// groups: every case of an optional group checks that its hooks throw
// NotSupported naming the backend and the group. The one-device backend
// exercises the cases that need two devices and skip with a reason.
#include "accel/conformance.h"
#include "minimal_backend.h"

namespace {
using accel::conformance::testing::registerMinimalBackend;
const bool kMinimalBackendsRegistered = (registerMinimalBackend("minimaldev", 2),
                                         registerMinimalBackend("minimalone", 1), true);
}  // namespace

ACCEL_INSTANTIATE_CONFORMANCE(MinimalBackend, "minimaldev", "minimalone");
